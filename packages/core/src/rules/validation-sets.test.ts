import { describe, expect, it } from 'vitest'
import { defineRules } from './define-rules.js'
import type { RuleValidationError } from './issues.js'
import { loadRulesText } from './load-text.js'
import { parseRules } from './parse-rules.js'
import { bucket, code, expectOne, file, fileBucket, issuesOf, log } from './test-fixtures.js'

describe('rule matches, costs, policies and rule sets', () => {
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
      'expected one of "enforce", "shadow", got "dry-run"',
    )
    expectOne(code({ ...bucket, onStoreError: 'maybe' }), 'onStoreError', '"open", "closed"')
    expectOne(
      file({ ...fileBucket, on_missing_identity: 'skip' }),
      'on_missing_identity',
      'one of "ip", "deny"',
    )
  })

  it('refuses costs that are not whole, negative, or above what the rule can ever admit', () => {
    const batch = (cost: unknown) =>
      code({ ...bucket, costByRoute: { 'POST /v1/labels:batch': cost } })
    const field = 'costByRoute["POST /v1/labels:batch"]'
    expectOne(batch(21), field, 'expected a whole number from 0 to 20, got 21')
    expectOne(batch(-1), field, 'expected a whole number from 0 to 20, got -1')
    expectOne(batch(1.5), field, 'got 1.5')
    expectOne(code({ ...log, cost: 6 }), 'cost', 'expected a whole number from 0 to 5, got 6')
    expectOne(
      code({ ...bucket, costByRoute: { '/x': 1, '/x/': 2 } }),
      'costByRoute["/x/"]',
      'given twice',
    )
    expectOne(
      code({ ...bucket, costByRoute: { '/v1/Export': 5, '/v1/export': 2 } }),
      'costByRoute["/v1/export"]',
      'the same route as "/v1/Export", given twice',
    )
    expectOne(
      code({ ...bucket, costByRoute: [1] }),
      'costByRoute',
      'expected { route: cost }, got [1]',
    )
  })

  it('refuses a missing or malformed match and identity', () => {
    expectOne(
      code({ ...bucket, match: undefined }),
      'match',
      "expected an object such as { identity: 'ip' }, got undefined",
    )
    expectOne(code({ ...bucket, match: 'ip' }), 'match', 'expected an object')
    expectOne(code({ ...bucket, match: {} }), 'match.identity', 'required')
    expectOne(code({ ...bucket, match: { identity: [] } }), 'match.identity', 'non-empty list')
    expectOne(code({ ...bucket, match: { identity: ['ip', 'ip'] } }), 'match.identity', 'twice')
    expectOne(
      code({ ...bucket, match: { identity: 'a:b' } }),
      'match.identity',
      'expected an identity name matching /^[A-Za-z_][A-Za-z0-9_-]*$/, got "a:b"',
    )
    expectOne(
      code({ ...bucket, match: { identity: 'ip', plan: '' } }),
      'match.plan',
      'empty plan name',
    )
    expectOne(
      code({ ...bucket, match: { identity: 'ip', method: 'FETCH' } }),
      'match.method',
      'unknown method',
    )
  })

  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])(
    'refuses the identity name %j: every object has it, so every request would share one key',
    (name) => {
      const problem = `reserved identity name ${JSON.stringify(name)}`
      expectOne(code({ ...bucket, match: { identity: name } }), 'match.identity', problem)
      expectOne(
        file({ ...fileBucket, match: { identity: ['ip', name] } }),
        'match.identity',
        problem,
      )
    },
  )

  it('refuses rule sets that are not lists of objects', () => {
    expect(issuesOf(() => defineRules('rules' as never))[0]?.problem).toMatch(
      'expected a non-empty list of rules, got "rules"',
    )
    expect(issuesOf(() => defineRules([]))[0]?.problem).toMatch(
      'expected a non-empty list of rules, got []',
    )
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
    expect(error?.message).toMatch(/^\[tollgate\] 8 problems:\n {2}rule "login": match\.route: /)
    expect(error?.message).toContain(
      '\n  rule "free": brust: unknown field; did you mean "burst"?\n',
    )
    expect(error?.message).toContain(
      '\n  rule "login": mode: expected one of "enforce", "shadow", got "dry"',
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

describe('rule numbering', () => {
  /** The error a rule set (or a rules file) is refused with. */
  function refusalOf(start: () => unknown): RuleValidationError {
    try {
      start()
    } catch (error) {
      return error as RuleValidationError
    }
    throw new Error('the rules were accepted')
  }

  it('names no rule for a problem of the whole set, never a "rule #0"', () => {
    for (const start of [
      () => defineRules([]),
      () => defineRules('rules' as never),
      () => parseRules({ rules: [], extra: 1 }),
      () => loadRulesText('rules: [', 'yaml'),
      () => loadRulesText('{', 'json'),
    ]) {
      const error = refusalOf(start)
      expect(error.code).toBe('ERR_RL_INVALID_RULE')
      expect(error.rule).toBeUndefined()
      expect(error.issues.every((issue) => issue.rule === undefined)).toBe(true)
      expect(error.message).not.toMatch(/#0/)
      expect(error.message).toMatch(/^\[tollgate\] (\d+ problems:\n {2})?\w+: /)
    }
  })

  it('counts rules without a usable id from #1, as duplicate ids do', () => {
    for (let count = 1; count <= 4; count++) {
      const rules = Array.from({ length: count }, () => ({ ...bucket, id: undefined }))
      const error = refusalOf(() => defineRules(rules as never))
      const labels = [...new Set(error.issues.map((issue) => issue.rule))]
      expect(labels).toEqual(Array.from({ length: count }, (_, i) => `#${i + 1}`))
    }
    const twice = refusalOf(() => defineRules([bucket, bucket] as never))
    expect(twice.message).toContain('duplicate id: rule #1 has it too')
  })
})
