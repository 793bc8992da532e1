import { describe, expect, it } from 'vitest'
import { baseUrlRoot, normalizeBaseUrl } from '../../src/util/base-url.js'
import { UsageError } from '../../src/errors.js'

describe('normalizeBaseUrl', () => {
  it.each([
    ['http://host:8000', 'http://host:8000'],
    ['http://host:8000/', 'http://host:8000'],
    ['http://host:8000/v1', 'http://host:8000'],
    ['http://host:8000/v1/', 'http://host:8000'],
    ['https://host/llm', 'https://host/llm'],
    ['http://host/llm/v1', 'http://host/llm'],
    [' http://127.0.0.1:8000 ', 'http://127.0.0.1:8000'],
  ])('turns %s into the root %s', (input, root) => {
    expect(normalizeBaseUrl(input)).toEqual({ root })
  })

  it.each(['host:8000', 'ftp://host', 'not a url', ''])('rejects %j with a UsageError naming the value', (input) => {
    expect(() => normalizeBaseUrl(input)).toThrow(UsageError)
    expect(() => normalizeBaseUrl(input)).toThrow(`--base-url "${input}": expected an http(s) URL such as http://127.0.0.1:8000`)
  })
})

describe('baseUrlRoot', () => {
  it.each([
    ['http://host:8000', 'http://host:8000'],
    ['http://host:8000/', 'http://host:8000'],
    ['http://host:8000/v1', 'http://host:8000'],
    ['https://host/llm/v1/', 'https://host/llm'],
    ['http://host/llm', 'http://host/llm'],
  ])('turns %s into the root %s', (raw, root) => {
    expect(baseUrlRoot(raw)).toBe(root)
  })
})

describe('one base-URL rule', () => {
  it('refuses a query, a fragment and credentials, naming the value without its credentials', () => {
    expect(baseUrlRoot('http://host:8000/?a=1')).toEqual({ problem: 'expected a URL without a query or fragment', http: true })
    expect(() => normalizeBaseUrl('http://u:p@host:8000')).toThrow(/^--base-url "http:\/\/\*\*\*@host:8000": expected a URL without credentials/)
  })
})
