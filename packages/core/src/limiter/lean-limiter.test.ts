import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import type { AlgorithmName } from '../algorithms/types.js'
import { defineRules } from '../rules/define-rules.js'
import { RuleValidationError } from '../rules/issues.js'
import type { RuleConfig } from '../rules/types.js'
import { createLeanLimiter, createLimiter } from './create-limiter.js'
import { routeMatching } from './route-matching.js'

const NAMES = Object.keys(BUILT_IN_ALGORITHMS) as AlgorithmName[]
const RATE = ['token_bucket', 'gcra', 'leaky_bucket', 'leaky_queue']

const ruleOf = (name: AlgorithmName, quota: number, id: string): RuleConfig =>
  (RATE.includes(name)
    ? { id, match: { identity: 'ip' }, algorithm: name, rate: quota, period: '2s', burst: quota }
    : name === 'concurrency'
      ? { id, match: { identity: 'ip' }, algorithm: name, limit: quota }
      : {
          id,
          match: { identity: 'ip' },
          algorithm: name,
          limit: quota,
          window: '2s',
        }) as RuleConfig

describe('createLeanLimiter', () => {
  it('decides as createLimiter does, for every algorithm, when given the rules’ algorithms', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NAMES),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ key: fc.constantFrom('a', 'b'), advanceMs: fc.nat(1500) }), {
          maxLength: 20,
        }),
        (name, quota, calls) => {
          const rules = [ruleOf(name, quota, 'r')]
          const full = createLimiter({ rules })
          const lean = createLeanLimiter({
            rules,
            algorithms: { [name]: BUILT_IN_ALGORITHMS[name] },
          })
          let now = 1_000_000
          for (const { key, advanceMs } of calls) {
            now += advanceMs
            expect(lean.check(key, 'r', { now })).toEqual(full.check(key, 'r', { now }))
          }
        },
      ),
    )
  })

  it('refuses a rule validated elsewhere whose algorithm it was not given', () => {
    const rules = defineRules([ruleOf('gcra', 3, 'api'), ruleOf('fixed_window', 3, 'day')])
    const build = () =>
      createLeanLimiter({ rules, algorithms: { gcra: BUILT_IN_ALGORITHMS.gcra! } })
    expect(build).toThrow(RuleValidationError)
    expect(build).toThrow(/day.*algorithm.*fixed_window is not among the algorithms/s)
  })

  it('is what createLimiter does with an algorithms option: that option restricts it too', () => {
    const rules = [ruleOf('sliding_log', 3, 'login')]
    expect(() =>
      createLimiter({ rules, algorithms: { token_bucket: BUILT_IN_ALGORITHMS.token_bucket! } }),
    ).toThrow(/login.*algorithm/s)
    expect(() => createLeanLimiter({ rules })).toThrow(/algorithms: expected/)
  })

  it('matches routes and costs by route as createLimiter does when given routeMatching', () => {
    const tokenBucket = BUILT_IN_ALGORITHMS.token_bucket!
    const rules: RuleConfig[] = [
      {
        id: 'jobs',
        match: { identity: 'ip', route: ['POST /v1/jobs/:id', '/v1/files/*'] },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 4,
        costByRoute: { 'POST /v1/jobs/:id': 2 },
      },
      { id: 'all', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 6 },
    ]
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'HEAD'),
      path: fc.constantFrom('/v1/jobs/7', '/v1/jobs/7/', '/v1/%6Aobs/7', '/v1/files/a/b', '/'),
      ip: fc.constantFrom('192.0.2.1', '192.0.2.2'),
      advanceMs: fc.nat(1500),
    })
    fc.assert(
      fc.property(fc.array(request, { maxLength: 25 }), (requests) => {
        const full = createLimiter({ rules })
        const lean = createLeanLimiter({
          rules,
          algorithms: { token_bucket: tokenBucket },
          routes: routeMatching,
        })
        let now = 1_000_000
        for (const { method, path, ip, advanceMs } of requests) {
          now += advanceMs
          const facts = { method, path, identities: { ip } }
          expect(lean.decide(facts, { now })).toEqual(full.decide(facts, { now }))
        }
      }),
    )
  })

  it('refuses at start-up rules naming routes without route matching, naming rule and field', () => {
    const algorithms = { token_bucket: BUILT_IN_ALGORITHMS.token_bucket! }
    const bucket = { algorithm: 'token_bucket', rate: 1, burst: 2 } as const
    const rules: RuleConfig[] = [
      { id: 'login', match: { identity: 'ip', route: 'POST /login' }, ...bucket },
      { id: 'costly', match: { identity: 'ip' }, ...bucket, costByRoute: { '/export': 2 } },
      { id: 'all', match: { identity: 'ip' }, ...bucket },
    ]
    let thrown: unknown
    try {
      createLeanLimiter({ rules, algorithms })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(RuleValidationError)
    expect((thrown as RuleValidationError).issues).toEqual([
      expect.objectContaining({ rule: 'login', field: 'match.route' }),
      expect.objectContaining({ rule: 'costly', field: 'costByRoute["/export"]' }),
    ])
    expect(String((thrown as Error).message)).toContain('routes: routeMatching')
    // Rules validated elsewhere (defineRules knows routes) are refused all the same.
    expect(() => createLeanLimiter({ rules: defineRules(rules), algorithms })).toThrow(
      /login.*match.route.*routes: routeMatching/s,
    )
    // A rule set naming no route needs none.
    expect(() => createLeanLimiter({ rules: rules.slice(2), algorithms })).not.toThrow()
    expect(() => createLeanLimiter({ rules, algorithms, routes: 'all' as never })).toThrow(
      /routes: expected routeMatching/,
    )
  })
})
