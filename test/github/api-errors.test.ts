import { describe, expect, it } from 'vitest'
import { apiStatus, describeApiError } from '../../src/github/api-errors.js'

const httpError = (status: number, message: string) => Object.assign(new Error(message), { status })

describe('describeApiError', () => {
  it.each([
    [httpError(403, 'Resource not accessible by integration'), /^HTTP 403 \(Resource not accessible by integration\): .*read-only token.*pull-requests: write/],
    [httpError(403, 'You have exceeded a secondary rate limit'), /^HTTP 403 .*: GitHub's API rate limit was hit$/],
    [httpError(429, 'API rate limit exceeded'), /^HTTP 429 .*rate limit was hit$/],
    [httpError(502, 'Bad Gateway'), /^HTTP 502 \(Bad Gateway\): GitHub's API is having trouble$/],
    [new Error('getaddrinfo ENOTFOUND api.github.com'), /^getaddrinfo ENOTFOUND api\.github\.com$/],
  ])('%s → %s', (err, pattern) => {
    expect(describeApiError(err)).toMatch(pattern)
  })

  it('reads the status only when it is a number', () => {
    expect(apiStatus(httpError(404, 'x'))).toBe(404)
    expect(apiStatus({ status: '404' })).toBeNull()
    expect(apiStatus(null)).toBeNull()
  })
})
