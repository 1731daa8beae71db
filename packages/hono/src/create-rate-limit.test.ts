import {
  apiKeyIdentity,
  clockReader,
  concurrency,
  createLimiter,
  draft6Headers,
  draft7Headers,
  draft12Headers,
  isRateLimitError,
  mapStore,
  memoryStore,
  missingIdentityStatus,
  partitionKeys,
  type RuleConfig,
  RuleValidationError,
  reservations,
  routeMatching,
  settleFrom,
  slidingLog,
  tokenBucket,
  trustedProxies,
  xRateLimitHeaders,
} from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import { Hono, type MiddlewareHandler } from 'hono'
import { describe, expect, it } from 'vitest'
import { createRateLimit, rateLimit } from './index.js'

const START = Date.UTC(2026, 0, 1)
const perIp: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
]
const connInfo = () => ({ remote: { address: '203.0.113.7' } })

/** Every status, header and body a run of requests is answered with, on its own clock. */
async function answers(make: (clock: ReturnType<typeof manualClock>) => MiddlewareHandler) {
  const clock = manualClock(START)
  const app = new Hono()
  app.use(make(clock))
  app.get('*', (c) => c.text('ok'))
  const seen = []
  for (const advance of [0, 0, 0, 400, 700, 0]) {
    clock.advance(advance)
    const response = await app.request('/v1/quotes')
    seen.push({
      status: response.status,
      headers: [...response.headers],
      body: await response.text(),
    })
  }
  return seen
}

function refusal(make: () => unknown): unknown {
  try {
    make()
  } catch (error) {
    return error
  }
  throw new Error('not refused')
}

describe('createRateLimit', () => {
  it('answers as rateLimit does, with only the parts it was given', async () => {
    const composed = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      store: mapStore,
      headers: [xRateLimitHeaders],
      clock: clockReader,
    })
    const expected = await answers((clock) => rateLimit(perIp, { clock, getConnInfo: connInfo }))
    expect(expected.map((answer) => answer.status)).toEqual([200, 200, 429, 429, 200, 429])
    expect(await answers((clock) => composed(perIp, { clock, getConnInfo: connInfo }))).toEqual(
      expected,
    )
    const onMemory = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      headers: [xRateLimitHeaders],
      clock: clockReader,
    })
    expect(
      await answers((clock) =>
        onMemory(perIp, { clock, getConnInfo: connInfo, store: memoryStore() }),
      ),
    ).toEqual(expected)
  })

  it('sends the current draft’s fields only, unless given other families', async () => {
    const composed = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      store: mapStore,
      clock: clockReader,
    })
    const expected = await answers((clock) =>
      rateLimit(perIp, { clock, getConnInfo: connInfo, legacyHeaders: false }),
    )
    expect(await answers((clock) => composed(perIp, { clock, getConnInfo: connInfo }))).toEqual(
      expected,
    )
    expect(expected[0]!.headers.map(([name]) => name)).not.toContain('x-ratelimit-limit')

    for (const [options, field, part] of [
      [{ legacyHeaders: true }, 'legacyHeaders', 'xRateLimitHeaders'],
      [{ standardHeaders: 'draft-6' }, 'standardHeaders', 'draft6Headers'],
      [{ standardHeaders: 'draft-7' }, 'standardHeaders', 'draft7Headers'],
      [{ standardHeaders: 'draft-12' }, 'standardHeaders', 'draft12Headers'],
    ] as const) {
      const error = refusal(() => composed(perIp, options))
      expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_OPTION')
      expect(isRateLimitError(error) && error.field).toBe(field)
      expect(String(error)).toContain(`needs ${part} in createRateLimit's headers`)
    }
    expect(() => composed(perIp, { standardHeaders: 'draft-5' as never })).toThrow(
      /standardHeaders: expected one of false, "draft-6"/,
    )

    const drafts = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      store: mapStore,
      headers: [draft6Headers, draft7Headers, draft12Headers],
      clock: clockReader,
    })
    for (const standardHeaders of ['draft-6', 'draft-7', 'draft-12'] as const) {
      expect(
        await answers((clock) => drafts(perIp, { clock, getConnInfo: connInfo, standardHeaders })),
      ).toEqual(
        await answers((clock) =>
          rateLimit(perIp, { clock, getConnInfo: connInfo, standardHeaders, legacyHeaders: false }),
        ),
      )
    }
    expect(() => createRateLimit({ algorithms: {}, headers: xRateLimitHeaders } as never)).toThrow(
      /headers: expected a list/,
    )
  })

  it('refuses at start-up a rule naming an algorithm it was not given, naming the rule', () => {
    const composed = createRateLimit({ algorithms: { token_bucket: tokenBucket }, store: mapStore })
    const rules: RuleConfig[] = [
      ...perIp,
      { id: 'log', match: { identity: 'ip' }, algorithm: 'sliding_log', limit: 5, window: '1m' },
    ]
    const error = refusal(() => composed(rules))
    expect(error).toBeInstanceOf(RuleValidationError)
    expect((error as RuleValidationError).issues).toEqual([
      {
        rule: 'log',
        field: 'algorithm',
        problem: 'sliding_log is not in the algorithms option: add it',
      },
    ])
    const both = createRateLimit({
      algorithms: { token_bucket: tokenBucket, sliding_log: slidingLog },
      store: mapStore,
    })
    expect(() => both(rules)).not.toThrow()
  })

  it('refuses a rule naming a route unless given routeMatching, naming the rule and field', async () => {
    const routed: RuleConfig[] = [
      {
        id: 'login',
        match: { identity: 'ip', route: 'POST /v1/login' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 1,
      },
    ]
    const without = createRateLimit({ algorithms: { token_bucket: tokenBucket }, store: mapStore })
    const error = refusal(() => without(routed)) as RuleValidationError
    expect(error.code).toBe('ERR_RL_INVALID_RULE')
    expect(error.issues).toHaveLength(1)
    expect(error.issues[0]).toMatchObject({ rule: 'login', field: 'match.route' })
    expect(error.issues[0]!.problem).toMatch(/routes: routeMatching/)

    const composed = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      routes: routeMatching,
      store: mapStore,
    })
    const app = new Hono()
    app.use(composed(routed, { getConnInfo: connInfo }))
    app.all('*', (c) => c.text('ok'))
    const login = () => app.request('/v1/login', { method: 'POST' })
    expect((await login()).status).toBe(200)
    expect((await login()).status).toBe(429)
    expect((await app.request('/v1/quotes', { method: 'POST' })).status).toBe(200)
  })

  it('watches for forwarding headers that no proxy is trusted with only when given trustedProxies', async () => {
    const warned = async (parts: Parameters<typeof createRateLimit>[0]) => {
      const warnings: string[] = []
      const app = new Hono()
      const logger = { warn: (message: string) => void warnings.push(message) }
      app.use(createRateLimit(parts)(perIp, { getConnInfo: connInfo, logger }))
      app.get('*', (c) => c.text('ok'))
      await app.request('/', { headers: { 'x-forwarded-for': '198.51.100.1' } })
      return warnings
    }
    const parts = { algorithms: { token_bucket: tokenBucket }, store: mapStore }
    expect(await warned(parts)).toEqual([])
    expect(await warned({ ...parts, proxies: trustedProxies })).toEqual([
      expect.stringContaining('WARN_FORWARDED_HEADERS_IGNORED'),
    ])
  })

  it('refuses a trustProxy that trusts a proxy unless given trustedProxies', async () => {
    const without = createRateLimit({ algorithms: { token_bucket: tokenBucket }, store: mapStore })
    const error = refusal(() => without(perIp, { trustProxy: 'loopback' }))
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_OPTION')
    expect(isRateLimitError(error) && error.field).toBe('trustProxy')
    expect(() => without(perIp, { trustProxy: false })).not.toThrow()

    const composed = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      proxies: trustedProxies,
      store: mapStore,
    })
    const app = new Hono()
    const loopback = () => ({ remote: { address: '127.0.0.1' } })
    app.use(composed(perIp, { trustProxy: 'loopback', getConnInfo: loopback }))
    app.get('*', (c) => c.text('ok'))
    const from = (ip: string) => app.request('/', { headers: { 'x-forwarded-for': ip } })
    expect((await from('198.51.100.1')).status).toBe(200)
    expect((await from('198.51.100.1')).status).toBe(200)
    expect((await from('198.51.100.1')).status).toBe(429)
    expect((await from('198.51.100.2')).status).toBe(200)
  })

  it('refuses api_key rules and API-key options unless given apiKeyIdentity, then keys by API key', async () => {
    const algorithms = { token_bucket: tokenBucket }
    const perKey = [{ ...perIp[0]!, id: 'per-key', match: { identity: 'api_key' } }] as const
    const without = createRateLimit({ algorithms, store: mapStore })
    const needs = "needs apiKeys: apiKeyIdentity in createRateLimit's parts"
    expect(refusal(() => without(perKey))).toMatchObject({
      code: 'ERR_RL_INVALID_RULE',
      message: `[tollgate] rule "per-key": match.identity: ${needs}`,
    })
    expect(refusal(() => without(perIp, { apiKeyHeader: 'x-key' }))).toMatchObject({
      code: 'ERR_RL_INVALID_OPTION',
      field: 'apiKeyHeader',
      message: `[tollgate] apiKeyHeader: ${needs}`,
    })

    const composed = createRateLimit({ algorithms, store: mapStore, apiKeys: apiKeyIdentity })
    const app = new Hono()
    app.use(composed(perKey, { apiKeyHeader: 'x-key', getConnInfo: connInfo }))
    app.get('*', (c) => c.text('ok'))
    const by = (key: string) => app.request('/', { headers: { 'x-key': key } })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await by('k_1')).status)
    expect(statuses).toEqual([200, 200, 429])
    expect((await by('k_2')).status).toBe(200)
  })

  it('refuses partitionKey unless given partitionKeys, then sends the same pk', async () => {
    const algorithms = { token_bucket: tokenBucket }
    const without = createRateLimit({ algorithms, store: mapStore })
    const error = refusal(() => without(perIp, { partitionKey: true }))
    expect(isRateLimitError(error) && error.field).toBe('partitionKey')
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_OPTION')
    const composed = createRateLimit({
      algorithms,
      store: mapStore,
      partitionKeys,
      clock: clockReader,
    })
    const expected = await answers((clock) =>
      rateLimit(perIp, { clock, getConnInfo: connInfo, partitionKey: true, legacyHeaders: false }),
    )
    expect(expected[0]!.headers).toContainEqual(['ratelimit', expect.stringContaining(';pk=:')])
    expect(
      await answers((clock) =>
        composed(perIp, { clock, getConnInfo: connInfo, partitionKey: true }),
      ),
    ).toEqual(expected)
  })

  it('refuses missingIdentity unless given missingIdentityStatus, then answers as rateLimit does', async () => {
    const algorithms = { token_bucket: tokenBucket }
    const perUser = [
      { ...perIp[0]!, match: { identity: 'user' }, onMissingIdentity: 'deny' },
    ] as const
    const missingIdentity = { status: 401, wwwAuthenticate: 'Bearer realm="api"' } as const
    const without = createRateLimit({ algorithms, store: mapStore, clock: clockReader })
    for (const value of [missingIdentity, { status: 400 }, null]) {
      expect(refusal(() => without(perUser, { missingIdentity: value as never }))).toMatchObject({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'missingIdentity',
        message:
          "[tollgate] missingIdentity: needs missingIdentity: missingIdentityStatus in createRateLimit's parts",
      })
    }
    // Without the option, the default 400.
    const plain = await answers((clock) => without(perUser, { clock, getConnInfo: connInfo }))
    expect(plain.map(({ status }) => status)).toEqual([400, 400, 400, 400, 400, 400])

    const composed = createRateLimit({
      algorithms,
      store: mapStore,
      missingIdentity: missingIdentityStatus,
      clock: clockReader,
    })
    expect(
      refusal(() => composed(perUser, { missingIdentity: { status: 401 } as never })),
    ).toMatchObject({
      code: 'ERR_RL_INVALID_OPTION',
      field: 'missingIdentity',
      message: expect.stringMatching(/^\[tollgate\] missingIdentity: expected \{ status: 400 \}/),
    })
    const options = { getConnInfo: connInfo, missingIdentity, legacyHeaders: false }
    const expected = await answers((clock) => rateLimit(perUser, { clock, ...options }))
    expect(expected[0]).toMatchObject({
      status: 401,
      headers: expect.arrayContaining([['www-authenticate', 'Bearer realm="api"']]),
    })
    expect(
      await answers((clock) =>
        composed(perUser, { clock, getConnInfo: connInfo, missingIdentity }),
      ),
    ).toEqual(expected)
  })

  it('refuses a rule with settle unless given reservations, then settles the same', async () => {
    const algorithms = { token_bucket: tokenBucket }
    const settling: RuleConfig[] = [
      {
        id: 'per-ip',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 3,
        settle: true,
      },
    ]
    // Each response costs 2 of the 1 reserved: the third request finds the bucket short.
    const settle = settleFrom(() => 2)
    const without = createRateLimit({ algorithms, store: mapStore })
    const error = refusal(() => without(settling, { settle }))
    expect(isRateLimitError(error) && error.field).toBe('reservations')
    expect(String(error)).toContain('"per-ip"')
    const composed = createRateLimit({
      algorithms,
      store: memoryStore,
      reservations,
      clock: clockReader,
    })
    const expected = await answers((clock) =>
      rateLimit(settling, { clock, getConnInfo: connInfo, settle, legacyHeaders: false }),
    )
    expect(expected.map((answer) => answer.status)).toContain(429)
    expect(
      await answers((clock) => composed(settling, { clock, getConnInfo: connInfo, settle })),
    ).toEqual(expected)
  })

  it('holds a concurrency slot until the body has been sent, as rateLimit does, composed of concurrency', async () => {
    const oneAtATime: RuleConfig[] = [
      { id: 'reports', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 1 },
    ]
    const composed = createRateLimit({ algorithms: { concurrency }, store: mapStore })
    for (const limit of [rateLimit, composed]) {
      const app = new Hono()
      app.use(limit(oneAtATime, { getConnInfo: connInfo }))
      app.get('*', (c) => c.body(new Blob(['a report']).stream()))
      const first = await app.request('/report')
      // The handler has returned; its body has not been read yet: the slot is still held.
      expect((await app.request('/report')).status).toBe(429)
      expect(await first.text()).toBe('a report')
      expect((await app.request('/report')).status).toBe(200)
    }
  })

  it('refuses a limiter of its own with concurrency rules unless given concurrency', () => {
    const limiter = createLimiter({
      rules: [{ id: 'reports', match: { identity: 'ip' }, algorithm: 'concurrency', limit: 1 }],
    })
    const without = createRateLimit({ algorithms: { token_bucket: tokenBucket }, store: mapStore })
    const error = refusal(() => without(limiter))
    expect(isRateLimitError(error) && error.field).toBe('concurrency')
    expect(String(error)).toContain(
      "concurrency: needs concurrency in createRateLimit's algorithms",
    )
    expect(() => createRateLimit({ algorithms: { concurrency } })(limiter)).not.toThrow()
  })

  it('refuses a limiter of its own keyed on api_key unless given apiKeyIdentity', () => {
    const limiter = createLimiter({
      rules: [
        {
          id: 'per-key',
          match: { identity: 'api_key' },
          algorithm: 'token_bucket',
          rate: 1,
          burst: 1,
        },
      ],
    })
    const algorithms = { token_bucket: tokenBucket }
    const error = refusal(() => createRateLimit({ algorithms, store: mapStore })(limiter))
    expect(isRateLimitError(error) && error.field).toBe('rules')
    expect(String(error)).toContain(
      "rules: the limiter's rules key on api_key, which needs apiKeys: apiKeyIdentity in createRateLimit's parts",
    )
    const keyed = createLimiter({
      rules: [
        { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 1 },
      ],
    })
    expect(() => createRateLimit({ algorithms, store: mapStore })(keyed)).not.toThrow()
    expect(() =>
      createRateLimit({ algorithms, store: mapStore, apiKeys: apiKeyIdentity })(limiter),
    ).not.toThrow()
  })

  it('needs a store in the options when its parts make none', () => {
    const composed = createRateLimit({ algorithms: { token_bucket: tokenBucket } })
    const error = refusal(() => composed(perIp))
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_INVALID_OPTION')
    expect(isRateLimitError(error) && error.field).toBe('store')
    expect(() => composed(perIp, { store: mapStore() })).not.toThrow()
  })

  it('refuses parts it does not know, or of the wrong kind, when composed', () => {
    const algorithms = { token_bucket: tokenBucket }
    expect(() => createRateLimit({ algorithms, route: routeMatching } as never)).toThrow(
      /unknown option "route": did you mean "routes"\?/,
    )
    expect(() => createRateLimit({ algorithms, routes: true } as never)).toThrow(
      /routes: expected routeMatching/,
    )
    expect(() => createRateLimit({ algorithms, proxies: 'loopback' } as never)).toThrow(
      /proxies: expected trustedProxies/,
    )
    expect(() => createRateLimit({ algorithms, store: mapStore() } as never)).toThrow(
      /store: expected memoryStore or mapStore/,
    )
    expect(() => createRateLimit(undefined as never)).toThrow(/parts: expected/)
  })
})
