import { describe, expect, it } from 'vitest'
import { isFieldPresent } from './node-response-fields.js'

describe('isFieldPresent', () => {
  it("finds a field among a response's lower-case names, whatever the case it is written in", () => {
    const present = ['x-powered-by', 'ratelimit']
    expect(isFieldPresent(present, 'RateLimit')).toBe(true)
    expect(isFieldPresent(present, 'ratelimit')).toBe(true)
    expect(isFieldPresent(present, 'X-RateLimit-Limit')).toBe(false)
    // Asked again (the lower-case form now remembered), the answers are the same.
    expect(isFieldPresent(present, 'RateLimit')).toBe(true)
    expect(isFieldPresent(present, 'X-RateLimit-Limit')).toBe(false)
  })

  it('finds nothing on a response with no fields', () => {
    expect(isFieldPresent([], 'RateLimit')).toBe(false)
  })
})
