import { describe, expect, it } from 'vitest'
import { isServerOnThisHost } from '../../src/env/local-host.js'

const host = { name: 'gpu-1', addresses: ['10.0.0.7', 'fe80::1'] }

describe('isServerOnThisHost', () => {
  it.each([
    ['http://127.0.0.1:8000', true],
    ['http://127.1.2.3:8000', true],
    ['http://localhost:8000/v1', true],
    ['http://[::1]:8000', true],
    ['http://0.0.0.0:8000', true],
    ['http://gpu-1:8000', true],
    ['http://gpu-1.lab.example:8000', true],
    ['http://10.0.0.7:8000', true],
    ['http://[fe80::1]:8000', true],
    ['http://10.0.0.8:8000', false],
    ['http://gpu-2.lab.example:8000', false],
    ['https://api.example.com', false],
    ['not a url', false],
  ])('%s → %s', (url, expected) => {
    expect(isServerOnThisHost(url, host)).toBe(expected)
  })
})
