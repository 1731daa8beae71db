import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRateLimitError, RateLimitError } from './errors.js'
import { RuleValidationError } from './rules/issues.js'

/** The check as it was, with `instanceof` first. */
function oldIsRateLimitError(error: unknown): boolean {
  return (
    error instanceof RateLimitError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { name?: unknown }).name === 'RateLimitError' &&
      typeof (error as { code?: unknown }).code === 'string')
  )
}

describe('isRateLimitError', () => {
  it('answers as the check with instanceof did, on errors and on anything else', () => {
    const named = fc.record(
      {
        name: fc.constantFrom('RateLimitError', 'Error', undefined, 5),
        code: fc.constantFrom('ERR_RL_INVALID_RULE', 'x', 5, undefined, null),
      },
      { requiredKeys: [] },
    )
    const values = fc.oneof(
      fc.anything(),
      named,
      named.map((fields) => Object.assign(new Error('e'), fields)),
      fc.constant(new RateLimitError('ERR_RL_INVALID_OPTION', 'm')),
      fc.constant(new RuleValidationError([{ field: 'rules', problem: 'p' }])),
      fc.constant(new Error('plain')),
    )
    fc.assert(
      fc.property(values, (value) => {
        expect(isRateLimitError(value)).toBe(oldIsRateLimitError(value))
      }),
      { numRuns: 2000 },
    )
  })
})
