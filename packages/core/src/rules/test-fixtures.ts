// Helpers shared by the rule validation tests.
import { expect } from 'vitest'
import { isRateLimitError } from '../errors.js'
import { defineRules } from './define-rules.js'
import { type RuleIssue, RuleValidationError } from './issues.js'
import { parseRules } from './parse-rules.js'

const base = { id: 'r', match: { identity: 'ip' } }
export const bucket = { ...base, algorithm: 'token_bucket', rate: 10, burst: 20 }
export const log = { ...base, algorithm: 'sliding_log', limit: 5, window: '60s' }
export const fileBucket = { ...base, algorithm: 'token_bucket', rate_per_s: 10, burst: 20 }

/** The issues a rule set is refused with (fails the test if it is accepted). */
export function issuesOf(validate: () => unknown): RuleIssue[] {
  try {
    validate()
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError)
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_RULE')
    return [...(error as RuleValidationError).issues]
  }
  throw new Error('the rules were accepted')
}

export const code = (...rules: unknown[]) => issuesOf(() => defineRules(rules as never))
export const file = (...rules: unknown[]) => issuesOf(() => parseRules(rules))

/** The one issue of one rule: its field and a fragment of its problem. */
export function expectOne(issues: RuleIssue[], field: string, problem: string | RegExp) {
  expect(issues).toHaveLength(1)
  expect(issues[0]!.rule).toBe('r')
  expect(issues[0]!.field).toBe(field)
  expect(issues[0]!.problem).toMatch(problem)
}
