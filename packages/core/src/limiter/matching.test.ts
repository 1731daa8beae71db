import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'
import type { RequestFacts, Verdict } from './types.js'

const window = { algorithm: 'fixed_window', limit: 100, window: '1m' } as const
const ruleOn = (id: string, match: Partial<RuleConfig['match']>, extra: object = {}) =>
  ({ id, match: { identity: 'ip', ...match }, ...window, ...extra }) as RuleConfig

/** The ids of the rules a request matches, in the order the verdict reports them. */
function matcher(rules: RuleConfig[]) {
  const limiter = createLimiter({ rules })
  return (method: string, path: string, plan?: string) => {
    const facts: RequestFacts = { method, path, plan, identities: { ip: '192.0.2.1' } }
    return (limiter.decide(facts, { now: 0 }) as Verdict).decisions.map((d) => d.rule)
  }
}

describe('rule matching', () => {
  it('matches exact routes, :param segments and a trailing *', () => {
    const match = matcher([
      ruleOn('login', { route: 'POST /v1/login' }),
      ruleOn('order', { route: '/v1/orders/:id' }),
      ruleOn('v1', { route: 'GET /v1/*' }),
      ruleOn('batch', { route: 'POST /v1/labels:batch' }),
    ])
    expect(match('POST', '/v1/login')).toEqual(['login'])
    expect(match('GET', '/v1/login')).toEqual(['v1'])
    expect(match('GET', '/v1/orders/42')).toEqual(['order', 'v1'])
    expect(match('DELETE', '/v1/orders/42')).toEqual(['order'])
    expect(match('DELETE', '/v1/orders/42/items')).toEqual([])
    expect(match('DELETE', '/v1/orders')).toEqual([])
    expect(match('DELETE', '/v1/orders/')).toEqual([])
    expect(match('GET', '/v1')).toEqual(['v1'])
    expect(match('GET', '/v1x')).toEqual([])
    expect(match('GET', '/')).toEqual([])
    expect(match('POST', '/v1/labels:batch')).toEqual(['batch'])
    expect(match('POST', '/v1/labels')).toEqual([])
  })

  it('cannot be escaped by case, a trailing slash, a query string or a lower-case method', () => {
    const match = matcher([
      ruleOn('login', { route: 'POST /v1/login' }),
      ruleOn('id', { route: '/a/:id/B' }),
    ])
    for (const path of ['/V1/Login', '/v1/login/', '/v1/login//', '/v1/login?x=1']) {
      expect(match('POST', path), path).toEqual(['login'])
    }
    expect(match('post', '/v1/login')).toEqual(['login'])
    expect(match('GET', '/A/Xy/b/')).toEqual(['id'])
  })

  it('matches the path the frameworks route on: no scheme and host, no fragment, \\ as /', () => {
    const match = matcher([ruleOn('login', { route: 'POST /v1/login' })])
    const routedToLogin = [
      '/v1/login#x',
      '/v1/login#?x',
      '/v1\\login',
      '/v1\\Login\\#x',
      'http://x/v1/login',
      'HTTP://X:80/V1/LOGIN?q#f',
      'https://user:pw@[::1]:8443/v1/login/',
      'http:///v1/login',
      'web+app.v2://x\\v1\\login',
    ]
    for (const target of routedToLogin) expect(match('POST', target), target).toEqual(['login'])
    const elsewhere = ['http://x', 'http://x?/v1/login', 'http://x#/v1/login', '//x/v1/login', '*']
    for (const target of elsewhere) expect(match('POST', target), target).toEqual([])
  })

  it('applies a rule without a method to any method, even one no rule names', () => {
    const match = matcher([ruleOn('all', {}), ruleOn('posts', { method: 'POST' })])
    expect(match('PROPFIND', '/x')).toEqual(['all'])
    expect(match('get', '/x')).toEqual(['all'])
    expect(match('post', '/x')).toEqual(['all', 'posts'])
  })

  it('applies GET limits to HEAD requests, which run the same handlers', () => {
    const match = matcher([
      ruleOn('reads', { method: 'GET' }),
      ruleOn('exact', { route: 'GET /x' }),
    ])
    expect(match('HEAD', '/x')).toEqual(['reads', 'exact'])
    expect(match('POST', '/x')).toEqual([])
  })

  it('matches plans and methods, and reports decisions in rule order', () => {
    const match = matcher([
      ruleOn('global', {}),
      ruleOn('paid', { plan: ['growth', 'scale'], route: '/v1/*' }),
      ruleOn('writes', { method: ['POST', 'PUT'] }),
      ruleOn('exact', { route: ['/v1/quotes', 'PUT /v2/*'] }),
    ])
    expect(match('POST', '/v1/quotes', 'growth')).toEqual(['global', 'paid', 'writes', 'exact'])
    expect(match('POST', '/v1/quotes', 'free')).toEqual(['global', 'writes', 'exact'])
    expect(match('GET', '/v1/quotes')).toEqual(['global', 'exact'])
    expect(match('PUT', '/v2/x', 'scale')).toEqual(['global', 'writes', 'exact'])
    expect(match('PATCH', '/v2/x')).toEqual(['global'])
  })
})

describe('costs by route', () => {
  const limiter = createLimiter({
    rules: [
      {
        id: 'points',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 900,
        period: '1m',
        burst: 900,
        cost: 1,
        costByRoute: {
          '/v1/*': 2,
          'POST /v1/*': 5,
          '/v1/labels/:id': 3,
          'POST /v1/labels:batch': 10,
          '/v1/health': 0,
          'GET /v1/health': 0,
        },
      },
    ],
  })
  const cost = (method: string, path: string) =>
    (limiter.decide({ method, path, identities: { api_key: 'k' } }, { now: 0 }) as Verdict).deciding
      ?.cost

  it('takes an exact route first, then a route naming the method, then the first pattern written', () => {
    expect(cost('POST', '/v1/labels:batch')).toBe(10)
    expect(cost('POST', '/v1/labels/7')).toBe(5)
    expect(cost('GET', '/v1/labels/7')).toBe(2)
    expect(cost('DELETE', '/v1/labels/7')).toBe(2)
    expect(cost('GET', '/v1/Health/')).toBe(0)
    expect(cost('HEAD', '/v1/health')).toBe(0)
    expect(cost('GET', '/v2/x')).toBe(1)
  })

  it('inspects without charging at cost 0', () => {
    const before = (
      limiter.decide(
        { method: 'GET', path: '/v1/health', identities: { api_key: 'z' } },
        { now: 0 },
      ) as Verdict
    ).deciding
    expect(before).toMatchObject({ allowed: true, remaining: 900, cost: 0 })
  })
})

describe('keys', () => {
  const limiter = createLimiter({
    rules: [
      {
        id: 'pair',
        match: { identity: ['a', 'b'] },
        algorithm: 'fixed_window',
        limit: 1,
        window: '1m',
      },
    ],
    customIdentities: ['a', 'b'],
  })
  const keyOf = (a: string, b: string) =>
    (limiter.decide({ method: 'GET', path: '/', identities: { a, b } }, { now: 0 }) as Verdict)
      .deciding

  it('keeps composite keys apart whatever their content', () => {
    // A naive join with "&" would give both of these the same key.
    const first = keyOf('1&b#1:2', '3')
    const second = keyOf('1', '2&b#1:3')
    expect(first?.key).toBe('a#7:1&b#1:2&b#1:3')
    expect(second?.key).toBe('a#1:1&b#7:2&b#1:3')
    expect([first?.allowed, second?.allowed]).toEqual([true, true])
    for (const odd of ['\n', '{x}', 'é'.repeat(3), 'k'.repeat(10_000)]) {
      expect(keyOf(odd, odd)?.allowed).toBe(true)
      expect(keyOf(odd, odd)?.allowed).toBe(false)
    }
  })

  it('counts requests without any client IP in one shared bucket, with a warning', () => {
    const warnings: string[] = []
    const shared = createLimiter({
      rules: [
        {
          id: 'per-ip',
          match: { identity: 'ip' },
          algorithm: 'fixed_window',
          limit: 1,
          window: '1m',
        },
      ],
      logger: { warn: (message) => warnings.push(message) },
    })
    const anonymous = () =>
      shared.decide({ method: 'GET', path: '/', identities: {} }, { now: 0 }) as Verdict
    expect(anonymous().deciding).toMatchObject({ allowed: true, key: 'ip:' })
    expect(anonymous().allowed).toBe(false)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /^\[tollgate\] WARN_SHARED_CLIENT_BUCKET: rule "per-ip": requests without an ip identity share one bucket/,
    )
  })

  it("keys a request lacking a rule's identity on its IP, an empty or absent one on the shared key", () => {
    const warnings: string[] = []
    const limiter = createLimiter({
      rules: [ruleOn('per-key', { identity: 'api_key' })],
      logger: { warn: (message) => warnings.push(message) },
    })
    const keyFor = (identities: Record<string, string | undefined>) =>
      (limiter.decide({ method: 'GET', path: '/', identities }, { now: 0 }) as Verdict).deciding
        ?.key
    expect(keyFor({ ip: '192.0.2.1' })).toBe('ip:192.0.2.1')
    expect(keyFor({ api_key: '', ip: '192.0.2.1' })).toBe('ip:192.0.2.1')
    expect(keyFor({ ip: '' })).toBe('ip:')
    expect(keyFor({ ip: undefined })).toBe('ip:')
    expect(keyFor({})).toBe('ip:')
    expect(keyFor({ api_key: 'k' })).toBe('api_key:k')
    expect(warnings.filter((w) => w.includes('WARN_SHARED_CLIENT_BUCKET'))).toHaveLength(1)
  })
})
