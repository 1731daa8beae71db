import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import { defineRules } from './define-rules.js'
import { type RuleIssue, RuleValidationError } from './issues.js'
import { parseRules } from './parse-rules.js'

const base = { id: 'r', match: { identity: 'ip' } }
const bucket = { ...base, algorithm: 'token_bucket', rate: 10, burst: 20 }
const log = { ...base, algorithm: 'sliding_log', limit: 5, window: 60_000 }
const fileBucket = { ...base, algorithm: 'token_bucket', rate_per_s: 10, burst: 20 }

/** The issues a rule set is refused with (fails the test if it is accepted). */
function issuesOf(validate: () => unknown): RuleIssue[] {
  try {
    validate()
  } catch (error) {
    expect(error).toBeInstanceOf(RuleValidationError)
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_RULE')
    return [...(error as RuleValidationError).issues]
  }
  throw new Error('the rules were accepted')
}

const code = (...rules: unknown[]) => issuesOf(() => defineRules(rules as never))
const file = (...rules: unknown[]) => issuesOf(() => parseRules(rules))

/** The one issue of one rule: its field and a fragment of its problem. */
function expectOne(issues: RuleIssue[], field: string, problem: string | RegExp) {
  expect(issues).toHaveLength(1)
  expect(issues[0]!.rule).toBe('r')
  expect(issues[0]!.field).toBe(field)
  expect(issues[0]!.problem).toMatch(problem)
}

describe('rule validation', () => {
  it('accepts valid rules in both shapes', () => {
    expect(defineRules([bucket as never, { ...log, id: 'l' } as never])).toHaveLength(2)
    expect(parseRules([fileBucket])).toHaveLength(1)
  })

  it('refuses an unknown algorithm, suggesting the closest name', () => {
    expectOne(
      code({ ...bucket, algorithm: 'token_buket' }),
      'algorithm',
      'did you mean "token_bucket"',
    )
    expectOne(
      code({ ...bucket, algorithm: 'magic' }),
      'algorithm',
      /unknown algorithm "magic"; one of token_bucket/,
    )
    expectOne(code({ ...bucket, algorithm: undefined }), 'algorithm', 'required')
  })

  it('refuses leaky_queue, pointing to leaky_bucket, and reads sliding_counter as sliding_window', () => {
    expectOne(code({ ...bucket, algorithm: 'leaky_queue' }), 'algorithm', 'use leaky_bucket')
    const [rule] = defineRules([{ ...log, algorithm: 'sliding_counter' } as never])
    expect(rule?.algorithm).toBe('sliding_window')
  })

  it('refuses contradictory parameters: a window rule given a burst, a rate rule given a window', () => {
    expectOne(
      code({ ...log, burst: 5 }),
      'burst',
      'not used by sliding_log (a window rule: limit + window)',
    )
    expectOne(
      code({ ...bucket, window: '1m' }),
      'window',
      'not used by token_bucket (a rate rule: rate + burst)',
    )
    expectOne(
      file({ ...log, window: undefined, window_s: 60, rate_per_s: 1 }),
      'rate_per_s',
      'not used by sliding_log (a window rule: limit + window_s)',
    )
  })

  it('refuses missing parameters: a rate rule without a burst, a window rule without a window', () => {
    expectOne(code({ ...bucket, burst: undefined }), 'burst', 'required by token_bucket')
    expectOne(code({ ...log, window: undefined }), 'window', 'required by sliding_log')
    expectOne(
      file({ ...fileBucket, rate_per_s: undefined }),
      'rate_per_s',
      'required by token_bucket (a rate rule: rate_per_s + burst)',
    )
  })

  it('refuses a burst or a limit below 1, and rates that are not whole', () => {
    expectOne(code({ ...bucket, burst: 0 }), 'burst', 'expected a whole number ≥ 1, got 0')
    expectOne(code({ ...log, limit: -3 }), 'limit', 'got -3')
    expectOne(code({ ...bucket, rate: 2.5 }), 'rate', 'got 2.5')
    expectOne(file({ ...fileBucket, rate_per_s: 0.5 }), 'rate_per_s', 'rate: 1, period_s: 2')
    expectOne(file({ ...fileBucket, period_s: 1 }), 'rate_per_s', 'not both')
  })

  it('refuses zero, negative and malformed windows and periods', () => {
    expectOne(code({ ...log, window: 0 }), 'window', 'expected a duration > 0, got 0')
    expectOne(code({ ...log, window: -1000 }), 'window', '> 0')
    expectOne(code({ ...log, window: '0s' }), 'window', '> 0')
    expectOne(code({ ...log, window: 'a minute' }), 'window', "such as '500ms'")
    expectOne(code({ ...log, window: 1.5 }), 'window', 'whole milliseconds')
    expectOne(
      code({ ...bucket, period: '0.0001s' }),
      'period',
      'not a whole number of milliseconds',
    )
    const fileLog = { ...log, window: undefined }
    expectOne(file({ ...fileLog, window_s: 0 }), 'window_s', 'seconds > 0')
    expectOne(file({ ...fileLog, window_s: -60 }), 'window_s', 'got -60')
    expectOne(file({ ...fileLog, window_s: '60' }), 'window_s', 'got "60"')
  })

  it('passes the algorithm factories’ own checks on, under the rule and field', () => {
    expectOne(code({ ...log, limit: 100_001 }), 'limit', 'use sliding_window for large limits')
    expectOne(
      code({ ...bucket, algorithm: 'gcra', rate: 9_999_991, period: 9_999_993 }),
      'rate',
      'too fine-grained',
    )
  })

  it('refuses unknown fields, suggesting the closest known one', () => {
    expectOne(code({ ...bucket, brust: 20 }), 'brust', 'did you mean "burst"')
    expectOne(code({ ...bucket, rate_per_s: 10 }), 'rate_per_s', 'did you mean "rate"')
    expectOne(code({ ...bucket, cost_by_route: {} }), 'cost_by_route', 'did you mean "costByRoute"')
    expectOne(
      file({ ...fileBucket, costByRoute: {} }),
      'costByRoute',
      'did you mean "cost_by_route"',
    )
    expectOne(file({ ...fileBucket, windowMs: 1 }), 'windowMs', 'did you mean "window_s"')
    expectOne(code({ ...bucket, zzz: 1 }), 'zzz', 'unknown field (known: id, description, match')
    expectOne(
      code({ ...bucket, match: { identiy: 'ip', identity: 'ip' } }),
      'match.identiy',
      'did you mean "identity"',
    )
  })

  it('refuses duplicate ids, naming the first rule with the same id', () => {
    const issues = code(bucket, { ...log }, { ...bucket, id: 'other' })
    expect(issues).toEqual([
      {
        rule: 'r',
        field: 'id',
        problem: expect.stringContaining('duplicate id: rule #1 has the same id'),
      },
    ])
  })

  it('refuses bad ids', () => {
    expect(code({ ...bucket, id: 'has space' })).toEqual([
      { rule: 'has space', field: 'id', problem: expect.stringContaining('letters, digits') },
    ])
    expect(code({ ...bucket, id: 42 })).toEqual([
      { rule: '#1', field: 'id', problem: expect.stringContaining('got 42') },
    ])
  })

  it.each([
    ['POST v1', 'must start with "/"'],
    ['FETCH /x', 'unknown method "FETCH"'],
    ['/v1/*/x', 'only allowed as the last segment'],
    ['/v1/x*', 'must be a whole last segment'],
    ['/a//b', 'empty segment'],
    ['/:/x', 'bad parameter ":"'],
    ['/x?y=1', 'no query string'],
    ['GET /a /b', 'expected "METHOD /path"'],
  ])('refuses the bad route %j in match.route and cost_by_route', (route, problem) => {
    expectOne(code({ ...bucket, match: { identity: 'ip', route } }), 'match.route', problem)
    expectOne(
      code({ ...bucket, costByRoute: { [route]: 1 } }),
      `costByRoute[${JSON.stringify(route)}]`,
      problem,
    )
  })

  it('refuses a route whose method contradicts match.method', () => {
    const match = { identity: 'ip', method: 'GET', route: 'POST /v1/x' }
    expectOne(code({ ...bucket, match }), 'match.route', 'conflicts with match.method (GET)')
  })

  it('refuses bad modes and policies', () => {
    expectOne(
      code({ ...bucket, mode: 'dry-run' }),
      'mode',
      'expected "enforce" or "shadow", got "dry-run"',
    )
    expectOne(code({ ...bucket, onStoreError: 'maybe' }), 'onStoreError', '"open" or "closed"')
    expectOne(
      file({ ...fileBucket, on_missing_identity: 'skip' }),
      'on_missing_identity',
      '"ip" or "deny"',
    )
  })

  it('refuses costs that are not whole, negative, or above what the rule can ever admit', () => {
    const batch = (cost: unknown) =>
      code({ ...bucket, costByRoute: { 'POST /v1/labels:batch': cost } })
    const field = 'costByRoute["POST /v1/labels:batch"]'
    expectOne(batch(21), field, "a cost of 21 exceeds the rule's capacity of 20")
    expectOne(batch(-1), field, 'whole number ≥ 0')
    expectOne(batch(1.5), field, 'got 1.5')
    expectOne(code({ ...log, cost: 6 }), 'cost', 'capacity of 5')
    expectOne(
      code({ ...bucket, costByRoute: { '/x': 1, '/x/': 2 } }),
      'costByRoute["/x/"]',
      'given twice',
    )
    expectOne(code({ ...bucket, costByRoute: [1] }), 'costByRoute', 'expected an object')
  })

  it('refuses a missing or malformed match and identity', () => {
    expectOne(code({ ...bucket, match: undefined }), 'match', 'required')
    expectOne(code({ ...bucket, match: 'ip' }), 'match', 'expected an object')
    expectOne(code({ ...bucket, match: {} }), 'match.identity', 'required')
    expectOne(code({ ...bucket, match: { identity: [] } }), 'match.identity', 'non-empty list')
    expectOne(code({ ...bucket, match: { identity: ['ip', 'ip'] } }), 'match.identity', 'twice')
    expectOne(
      code({ ...bucket, match: { identity: 'a:b' } }),
      'match.identity',
      'bad identity name "a:b"',
    )
    expectOne(
      code({ ...bucket, match: { identity: 'ip', plan: '' } }),
      'match.plan',
      'cannot be empty',
    )
    expectOne(
      code({ ...bucket, match: { identity: 'ip', method: 'FETCH' } }),
      'match.method',
      'unknown method',
    )
  })

  it('refuses rule sets that are not lists of objects', () => {
    expect(issuesOf(() => defineRules('rules' as never))[0]?.problem).toMatch(
      'expected a list of rules',
    )
    expect(issuesOf(() => defineRules([]))[0]?.problem).toMatch('the list is empty')
    expect(code(42)).toEqual([{ rule: '#1', field: 'rule', problem: 'expected an object, got 42' }])
    expect(issuesOf(() => parseRules({ rules: [fileBucket], extra: 1 }))[0]).toMatchObject({
      field: 'extra',
    })
  })

  it('reports every problem of every rule at once, one line each, with rule id and field', () => {
    let error: RuleValidationError | undefined
    try {
      parseRules([
        {
          id: 'login',
          match: { identity: ['account', 'ip'], route: 'POST login' },
          algorithm: 'sliding_log',
          limit: 0,
          burst: 5,
          window_s: 60,
        },
        {
          id: 'free',
          match: { identity: 'api_key' },
          algorithm: 'token_bucket',
          rate_per_s: 10,
          brust: 20,
        },
        {
          id: 'login',
          match: { identity: 'ip' },
          algorithm: 'fixed_window',
          limit: 10,
          window_s: 0,
          mode: 'dry',
        },
      ])
    } catch (caught) {
      error = caught as RuleValidationError
    }
    expect(error?.issues.map(({ rule, field }) => `${rule} ${field}`)).toEqual([
      'login match.route',
      'login burst',
      'login limit',
      'free brust',
      'free burst',
      'login id',
      'login window_s',
      'login mode',
    ])
    expect(error?.message).toMatch(
      /^\[tollgate\] 8 problems in the rules:\n {2}rule "login": match\.route: /,
    )
    expect(error?.message).toContain(
      '\n  rule "free": brust: unknown field; did you mean "burst"?\n',
    )
    expect(error?.message).toContain(
      '\n  rule "login": mode: expected "enforce" or "shadow", got "dry"',
    )
    expect(error?.rule).toBe('login')
    expect(error?.field).toBe('match.route')
  })

  it('formats a single problem on one line', () => {
    expect(() => defineRules([{ ...bucket, burst: 0 } as never])).toThrow(
      /^\[tollgate\] rule "r": burst: expected a whole number ≥ 1, got 0$/,
    )
  })
})
