import {
  fixedWindow,
  gcra,
  leakyBucket,
  mapStore,
  type RuleConfig,
  RuleValidationError,
  type Store,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import fc from 'fast-check'
import { Hono, type MiddlewareHandler } from 'hono'
import { describe, expect, it } from 'vitest'
import { rateLimit } from './edge.js'
import { rateLimit as defaultRateLimit } from './index.js'

const FACTORIES = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  fixed_window: fixedWindow,
  sliding_log: slidingLog,
  sliding_window: slidingWindow,
} as const
const NAMES = Object.keys(FACTORIES) as (keyof typeof FACTORIES)[]
const RATE = ['token_bucket', 'gcra', 'leaky_bucket']
const START = Date.UTC(2026, 0, 1)

type RuleShape = {
  readonly name: keyof typeof FACTORIES
  readonly quota: number
  readonly spanMs: number
  readonly identity: readonly string[]
  readonly method: string | readonly string[] | undefined
  readonly plan: string | undefined
  readonly mode: 'enforce' | 'shadow'
  readonly onStoreError: 'open' | 'closed'
  readonly onMissingIdentity: 'ip' | 'deny'
  readonly cost: number
}

function ruleOf(shape: RuleShape, id: string): RuleConfig {
  const { name, quota, spanMs, identity, method, plan, mode, onStoreError, onMissingIdentity } =
    shape
  const params = RATE.includes(name)
    ? { rate: quota, period: `${spanMs}ms`, burst: quota }
    : { limit: quota, window: `${spanMs}ms` }
  return {
    id,
    match: {
      identity: identity.length === 1 ? identity[0]! : identity,
      ...(method === undefined ? {} : { method }),
      ...(plan === undefined ? {} : { plan }),
    },
    algorithm: name,
    ...params,
    mode,
    onStoreError,
    onMissingIdentity,
    cost: Math.min(shape.cost, quota),
  } as RuleConfig
}

const rule = fc.record<RuleShape>({
  name: fc.constantFrom(...NAMES),
  quota: fc.integer({ min: 1, max: 4 }),
  spanMs: fc.constantFrom(1000, 1500, 60_000),
  identity: fc.constantFrom(['ip'], ['api_key'], ['user'], ['account', 'ip']),
  method: fc.constantFrom(undefined, 'GET', ['POST', 'get']),
  plan: fc.constantFrom(undefined, 'free'),
  mode: fc.constantFrom('enforce', 'shadow'),
  onStoreError: fc.constantFrom('open', 'closed'),
  onMissingIdentity: fc.constantFrom('ip', 'deny'),
  cost: fc.integer({ min: 0, max: 2 }),
})

type Request = {
  readonly address: string
  readonly advanceMs: number
  readonly method: string
  readonly apiKey: string | undefined
  readonly user: string | undefined
  readonly plan: string | undefined
  readonly account: string | undefined
  readonly storeFails: boolean
  readonly clockFails: boolean
  readonly forwardedFor: string | undefined
}

const request = fc.record<Request>({
  address: fc.constantFrom(
    '192.0.2.1',
    '192.0.2.2',
    '2001:db8::1',
    '2001:db8:0:0:ffff::2',
    '2001:DB8:0:1::3',
    '::ffff:192.0.2.1',
    'junk',
  ),
  advanceMs: fc.integer({ min: 0, max: 1500 }),
  method: fc.constantFrom('GET', 'POST', 'HEAD', 'DELETE'),
  apiKey: fc.constantFrom(undefined, 'k_1', ' k_2 '),
  user: fc.constantFrom(undefined, 'u_1'),
  plan: fc.constantFrom(undefined, 'free', 'pro'),
  account: fc.constantFrom(undefined, 'a_1'),
  storeFails: fc.constantFrom(false, false, false, true),
  clockFails: fc.constantFrom(false, false, false, true),
  forwardedFor: fc.constantFrom(undefined, undefined, '198.51.100.7'),
})

const OPTIONS: ReadonlyArray<Record<string, unknown>> = [
  {},
  { legacyHeaders: false },
  { standardHeaders: false, legacyReset: 'delta-seconds' },
  { standardHeaders: 'draft-8', missingIdentity: { status: 401, wwwAuthenticate: 'Bearer' } },
  { storeErrorRetryAfterMs: 2500, ipv6Prefix: 48, ipv4Prefix: 24 },
  { apiKeyHeader: 'x-key', bearerAsApiKey: true, maxApiKeyLength: 3 },
]

/** A store that fails (throws, or rejects when asynchronous) while `faults.store` is set. */
function faultyStore(faults: { store: boolean }, asynchronous: boolean): Store {
  const inner = mapStore()
  const consume: Store['consume'] = (charges, now) => {
    if (faults.store) throw new Error('store down')
    return inner.consume(charges, now)
  }
  return asynchronous
    ? {
        consume: async (charges, now) => consume(charges, now),
        refund: async (charges, at, now) => inner.refund(charges, at, now),
      }
    : { consume, refund: (charges, at, now) => inner.refund(charges, at, now) }
}

type Build = (extra: Record<string, unknown>) => MiddlewareHandler | readonly MiddlewareHandler[]

/** Every status, header and body an app answers a run of requests with, on its own clock. */
async function answers(
  build: Build,
  requests: readonly Request[],
  asynchronous: boolean | 'default store',
  warnings?: string[],
) {
  const clock = manualClock(START)
  const faults = { store: false, clock: false }
  const app = new Hono()
  app.use((c, next) => {
    const user = c.req.header('x-user')
    if (user !== undefined) c.set('user' as never, { id: user } as never)
    return next()
  })
  // The default store of each entry (memoryStore, the edge entry's own), or a store that fails.
  const store = asynchronous === 'default store' ? undefined : faultyStore(faults, asynchronous)
  const built = build({
    store,
    clock: {
      now: () => {
        if (faults.clock) throw new Error('clock broke')
        return clock.now()
      },
    },
    logger: warnings === undefined ? false : { warn: (line: string) => warnings.push(line) },
    customIdentities: ['account'],
    plan: (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-plan'),
    identities: (c: { req: { header(name: string): string | undefined } }) => ({
      account: c.req.header('x-account'),
    }),
  })
  for (const middleware of Array.isArray(built) ? built : [built]) app.use(middleware)
  app.all('*', (c) => c.text('ok'))
  const seen = []
  for (const r of requests) {
    clock.advance(r.advanceMs)
    faults.store = r.storeFails && store !== undefined
    faults.clock = r.clockFails
    const headers = new Headers()
    const set = (name: string, value: string | undefined) => value && headers.set(name, value)
    set('x-api-key', r.apiKey)
    set('x-key', r.apiKey)
    set('authorization', r.apiKey && `Bearer ${r.apiKey}`)
    set('x-user', r.user)
    set('x-plan', r.plan)
    set('x-account', r.account)
    set('x-forwarded-for', r.forwardedFor)
    const env = { incoming: { socket: { remoteAddress: r.address } } }
    const response = await app.request('/', { method: r.method, headers }, env)
    seen.push({
      status: response.status,
      headers: [...response.headers],
      body: await response.text(),
    })
  }
  return seen
}

const algorithmsOf = (shapes: readonly RuleShape[]) =>
  Object.fromEntries(shapes.map((shape) => [shape.name, FACTORIES[shape.name]]))

describe('@tollgate/hono/edge', () => {
  it('answers every request as @tollgate/hono does: statuses, fields, bodies, store and clock faults', async () => {
    const statuses = new Set<number>()
    await fc.assert(
      fc.asyncProperty(
        fc.array(rule, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...OPTIONS),
        fc.constantFrom(false, true, 'default store' as const),
        fc.array(request, { minLength: 1, maxLength: 12 }),
        async (shapes, options, asynchronous, requests) => {
          const rules = shapes.map((shape, i) => ruleOf(shape, `rule-${i}`))
          const algorithms = algorithmsOf(shapes)
          const edge = await answers(
            (extra) => rateLimit(rules, { ...extra, ...options, algorithms } as never),
            requests,
            asynchronous,
          )
          const full = await answers(
            (extra) => defaultRateLimit(rules, { ...extra, ...options } as never),
            requests,
            asynchronous,
          )
          expect(edge).toEqual(full)
          for (const answer of edge) statuses.add(answer.status)
        },
      ),
      // Enough runs that the traces reach a 401 (one option set in six asks for it) all but
      // never by chance.
      { numRuns: 150 },
    )
    // The traces reached admissions, denials, fail-closed refusals and missing identities.
    expect([...statuses].sort()).toEqual([200, 400, 401, 429, 503])
  }, 120_000)

  it('warns with the codes @tollgate/hono warns with, as often, skipping ignoreWarnings', async () => {
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(
        fc.array(rule, { minLength: 1, maxLength: 2 }),
        fc.constantFrom<Record<string, unknown>>(
          {},
          { ignoreWarnings: ['WARN_CLIENT_ADDRESS_UNKNOWN', 'WARN_FORWARDED_HEADERS_IGNORED'] },
          { ipv6Prefix: 96 },
        ),
        fc.boolean(),
        fc.array(request, { minLength: 1, maxLength: 12 }),
        async (shapes, options, asynchronous, requests) => {
          const rules = shapes.map((shape, i) => ruleOf(shape, `rule-${i}`))
          const algorithms = algorithmsOf(shapes)
          const codes = async (build: Build) => {
            const warnings: string[] = []
            await answers(build, requests, asynchronous, warnings)
            return warnings.map((line) => line.split(':')[0])
          }
          const edge = await codes((extra) =>
            rateLimit(rules, { ...extra, ...options, algorithms } as never),
          )
          const full = await codes((extra) =>
            defaultRateLimit(rules, { ...extra, ...options } as never),
          )
          expect(edge).toEqual(full)
          for (const code of edge) seen.add(code!)
        },
      ),
      { numRuns: 60 },
    )
    expect([...seen].sort()).toEqual([
      '[tollgate] WARN_CLIENT_ADDRESS_UNKNOWN',
      '[tollgate] WARN_CLOCK_FAILED',
      '[tollgate] WARN_FORWARDED_HEADERS_IGNORED',
      '[tollgate] WARN_IPV6_UNMASKED',
      '[tollgate] WARN_SHARED_CLIENT_BUCKET',
      '[tollgate] WARN_STORE_FAILED',
    ])
  }, 120_000)

  it('answers as @tollgate/hono when two middlewares are stacked, and with an app’s own denial', async () => {
    await fc.assert(
      fc.asyncProperty(
        rule,
        rule,
        fc.boolean(),
        fc.array(request, { minLength: 1, maxLength: 10 }),
        async (outer, inner, ownAnswer, requests) => {
          const rules = [ruleOf(outer, 'outer'), ruleOf(inner, 'inner')]
          const algorithms = algorithmsOf([outer, inner])
          const onLimited = ownAnswer
            ? (c: { json(body: unknown, status: number): Response }, denial: { status: number }) =>
                c.json({ mine: true }, denial.status)
            : undefined
          const both = (make: (rules: RuleConfig[], options: never) => MiddlewareHandler) =>
            ((extra) => [
              make([rules[0]!], { ...extra, algorithms, onLimited } as never),
              make([rules[1]!], { ...extra, algorithms, onLimited } as never),
            ]) satisfies Build
          const edge = await answers(both(rateLimit), requests, false)
          const full = await answers(both(defaultRateLimit), requests, false)
          expect(edge).toEqual(full)
        },
      ),
      { numRuns: 60 },
    )
  }, 120_000)

  it('takes rules validated by defineRules, as the default entry does', async () => {
    const { defineRules } = await import('@tollgate/core')
    const rules = defineRules([
      { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'sliding_log', limit: 1, window: '1m' },
    ])
    const app = new Hono()
    app.use(rateLimit(rules, { algorithms: { sliding_log: slidingLog } }))
    app.get('/', (c) => c.text('ok'))
    const env = { incoming: { socket: { remoteAddress: '192.0.2.1' } } }
    expect((await app.request('/', {}, env)).status).toBe(200)
    expect((await app.request('/', {}, env)).status).toBe(429)
  })

  const refused = (rules: unknown, options: Record<string, unknown> = {}) => {
    try {
      rateLimit(
        rules as RuleConfig[],
        {
          algorithms: FACTORIES,
          logger: false,
          ...options,
        } as never,
      )
    } catch (error) {
      return error as RuleValidationError
    }
    throw new Error('not refused')
  }
  const base = { id: 'r', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 1 }

  it('refuses at start-up each rule field it does not take, naming the rule and the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, algorithm: 'leaky_queue' }, 'algorithm'],
      [
        { ...base, algorithm: 'concurrency', rate: undefined, burst: undefined, limit: 2 },
        'algorithm',
      ],
      [{ ...base, match: { identity: 'ip', route: 'POST /v1/login' } }, 'match.route'],
      [{ ...base, costByRoute: { '/v1/x': 2 } }, 'costByRoute'],
      [{ ...base, delay: 1 }, 'delay'],
      [
        {
          ...base,
          algorithm: 'fixed_window',
          rate: undefined,
          burst: undefined,
          limit: 2,
          window: 'day',
        },
        'window',
      ],
      [
        {
          ...base,
          algorithm: 'sliding_window',
          rate: undefined,
          burst: undefined,
          limit: 2,
          window: '1m',
          buckets: 4,
        },
        'buckets',
      ],
      [{ ...base, timeZone: 'Europe/Paris' }, 'timeZone'],
    ]
    for (const [raw, field] of cases) {
      const error = refused([raw])
      expect(error, field).toBeInstanceOf(RuleValidationError)
      expect(error.code).toBe('ERR_RL_INVALID_RULE')
      expect(error.issues[0], field).toMatchObject({ rule: 'r', field })
      expect(error.message).toMatch(/edge entry/)
    }
  })

  it('refuses invalid rules as the default entry does: same rule, field and code', () => {
    const cases: Array<Record<string, unknown>> = [
      { ...base, burst: 0 },
      { ...base, rate: 'ten' },
      { ...base, period: 60 },
      { ...base, period: '0s' },
      { ...base, cost: 2 },
      { ...base, cost: -1 },
      { ...base, mode: 'dry-run' },
      { ...base, onStoreError: 'maybe' },
      { ...base, onMissingIdentity: 'allow' },
      { ...base, match: { identity: 'apikey' } },
      { ...base, match: { identity: ['ip', 'ip'] } },
      { ...base, match: { identity: 'ip', method: 'FETCH' } },
      { ...base, match: { identity: 'ip', plan: '' } },
      { ...base, match: { identity: 'ip', methods: 'GET' } },
      { ...base, match: undefined },
      { ...base, id: 'has space' },
      { ...base, algorithm: 'token_buckets' },
      { ...base, limit: 3 },
      { ...base, burst: undefined },
      { ...base, brust: 3 },
      { ...base, description: 4 },
      { ...base, algorithm: 'fixed_window', window: '1m' },
    ]
    for (const raw of cases) {
      const edge = refused([raw])
      let full: RuleValidationError | undefined
      try {
        defaultRateLimit([raw] as never, { logger: false })
      } catch (error) {
        full = error as RuleValidationError
      }
      const where = (error: RuleValidationError | undefined) =>
        error?.issues.map((issue) => [issue.rule, issue.field]).sort()
      expect(edge.code, JSON.stringify(raw)).toBe(full?.code)
      expect(where(edge), JSON.stringify(raw)).toEqual(where(full))
    }
    expect(refused([]).issues[0]).toMatchObject({ field: 'rules' })
    expect(refused([base, base]).issues[0]).toMatchObject({ rule: 'r', field: 'id' })
  })

  it('refuses at start-up each option it does not take, and unknown ones, naming the option', () => {
    const rules = [base]
    for (const [option, value] of [
      ['routes', {}],
      ['timers', {}],
      ['proxies', () => undefined],
      ['proxyHeader', 'forwarded'],
      ['shadowPolicies', true],
      ['partitionKey', true],
      ['exposeHeaders', true],
      ['refund', 'failed'],
      ['onShadowDenied', () => undefined],
      ['shed', {}],
      ['debugHeader', () => undefined],
      ['trustProxy', 1],
      ['trustProxy', ['10.0.0.0/8']],
      ['standardHeaders', 'draft-7'],
      ['standardHeaders', 'draft-6'],
    ] as const) {
      const error = refused(rules, { [option]: value })
      expect(error.code, option).toBe('ERR_RL_INVALID_RULE')
      expect(error.field, option).toBe(option)
      expect(error.message, option).toMatch(/edge entry/)
    }
    for (const [option, value] of [
      ['trustproxy', true],
      ['windowMs', 1000],
      ['skip', 'yes'],
      ['getConnInfo', 1],
      ['store', {}],
      ['clock', 1],
      ['logger', {}],
      ['storeTimeoutMs', 0],
      ['storeErrorRetryAfterMs', 1.5],
      ['legacyHeaders', 'false'],
      ['legacyReset', 'never'],
      ['standardHeaders', 'draft-12'],
      ['missingIdentity', { status: 401 }],
      ['ipv6Prefix', 129],
      ['apiKeyHeader', 'x key'],
      ['maxApiKeyLength', 0],
      ['customIdentities', ['ip']],
      ['algorithms', undefined],
    ] as const) {
      const error = refused(rules, { [option]: value })
      expect(error.code, option).toBe('ERR_RL_INVALID_RULE')
      expect(error.field, option).toBe(option)
    }
    expect(() => refused(rules, { trustProxy: false, ipv6Prefix: 56 })).toThrow(/not refused/)
  })
})
