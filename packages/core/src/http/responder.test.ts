import { describe, expect, it } from 'vitest'
import { RateLimitError } from '../errors.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { quotaPerSeconds } from './policy-fields.js'
import { createResponder, type ResponderOptions } from './responder.js'
import type { HeaderEntries } from './types.js'

/** Header entries as an object; `RateLimit` is declared so it reads as a plain property. */
type Sent = { readonly RateLimit?: string } & Readonly<Record<string, string | undefined>>
const sent = (entries: HeaderEntries): Sent => Object.fromEntries(entries)

function decision(rule: string, figures: Partial<RuleDecision> = {}): RuleDecision {
  const allowed = figures.allowed ?? true
  return {
    rule,
    mode: 'enforce',
    cost: 1,
    policy: { quota: 100, windowMs: 60_000 },
    allowed,
    remaining: allowed ? 99 : 0,
    limit: figures.policy?.quota ?? 100,
    resetAfterMs: 60_000,
    retryAfterMs: allowed ? undefined : 1000,
    key: `ip:${rule}`,
    ...figures,
  }
}

function verdict(
  decisions: RuleDecision[],
  reason: Verdict['reason'] = 'limit',
  extra: Partial<Verdict> = {},
): Verdict {
  const enforcing = decisions.filter((d) => d.mode === 'enforce')
  const denying = enforcing.filter((d) => !d.allowed)
  const allowed = denying.length === 0
  const byRetry = (a: RuleDecision, b: RuleDecision) =>
    (b.retryAfterMs ?? 0) - (a.retryAfterMs ?? 0)
  const deciding = allowed
    ? [...enforcing].sort((a, b) => a.remaining - b.remaining)[0]
    : [...denying].sort(byRetry)[0]
  return {
    allowed,
    reason: allowed ? undefined : reason,
    decisions,
    deciding,
    shadowDenied: decisions.filter((d) => d.mode === 'shadow' && !d.allowed),
    at: 0,
    ...extra,
  }
}

const respond = (v: Verdict, options: ResponderOptions = {}, now = 0) =>
  createResponder(options).respond(v, now)
const names = (v: Verdict, options: ResponderOptions = {}) =>
  respond(v, options).headers.map(([name]) => name)

describe('what is sent by default', () => {
  it('on an admitted request: X-RateLimit-* and the current-form fields, nothing else', () => {
    const response = respond(
      verdict([decision('api', { remaining: 42, resetAfterMs: 12_500 })]),
      {},
      1_700_000_000_000,
    )
    expect(response).toMatchObject({ allowed: true, status: undefined, body: undefined })
    expect(response.headers).toEqual([
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '42'],
      ['X-RateLimit-Reset', '1700000013'],
      ['RateLimit-Policy', '"api";q=100;w=60'],
      ['RateLimit', '"api";r=42;t=13'],
    ])
  })

  it('nothing at all when no rule matched', () => {
    expect(respond(verdict([])).headers).toEqual([])
  })

  it('X-RateLimit-Reset as seconds from now with legacyReset: delta-seconds', () => {
    const v = verdict([decision('api', { resetAfterMs: 12_500 })])
    expect(
      sent(respond(v, { legacyReset: 'delta-seconds' }, 1_700_000_000_000).headers)[
        'X-RateLimit-Reset'
      ],
    ).toBe('13')
  })

  it('turns each family off', () => {
    const v = verdict([decision('api')])
    expect(names(v, { legacyHeaders: false })).toEqual(['RateLimit-Policy', 'RateLimit'])
    expect(names(v, { standardHeaders: false })).toEqual([
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ])
    expect(names(v, { legacyHeaders: false, standardHeaders: false })).toEqual([])
  })
})

describe('Retry-After', () => {
  it.each([
    [1, '1'],
    [999, '1'],
    [1000, '1'],
    [1001, '2'],
    [59_999, '60'],
    [0, '1'], // never 0: an immediate retry helps nobody
  ])(
    'retryAfterMs %i is sent as %s, and the denied policy’s t matches',
    (retryAfterMs, seconds) => {
      const v = verdict([decision('api', { allowed: false, retryAfterMs, resetAfterMs: 60_000 })])
      const headers = sent(respond(v).headers)
      expect(headers['Retry-After']).toBe(seconds)
      expect(headers.RateLimit).toBe(`"api";r=0;t=${seconds}`)
    },
  )

  it('is the longest wait over the violated rules, and absent from admitted responses', () => {
    const v = verdict([
      decision('a', { allowed: false, retryAfterMs: 2000 }),
      decision('b', { allowed: false, retryAfterMs: 7500 }),
    ])
    expect(sent(respond(v).headers)['Retry-After']).toBe('8')
    expect(names(verdict([decision('a')]))).not.toContain('Retry-After')
  })
})

describe('the 429 problem body', () => {
  it('is RFC 9457 problem+json with the draft’s quota-exceeded type, naming every violated policy', () => {
    const v = verdict([
      decision('burst', {
        policy: { quota: 10, windowMs: 1000 },
        limit: 20,
        allowed: false,
        retryAfterMs: 100,
      }),
      decision('daily', {
        policy: { quota: 1000, windowMs: 86_400_000 },
        allowed: false,
        retryAfterMs: 3_600_000,
      }),
      decision('ok', { remaining: 5 }),
    ])
    const response = respond(v)
    expect(response.status).toBe(429)
    expect(JSON.parse(response.body!)).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota Exceeded',
      status: 429,
      detail:
        'Too many requests for the rate-limit policies "burst" (10 per 1 s, bursts of 20), "daily" (1000 per 86400 s). Retry after 3600 s.',
      'violated-policies': ['burst', 'daily'],
      retryAfter: 3600,
    })
    expect(response.problem).toEqual(JSON.parse(response.body!))
  })
})

describe('shadow rules', () => {
  const shadow = decision('shadow-new', { mode: 'shadow', allowed: false, retryAfterMs: 5000 })

  it('are left out of every header and never make a denial', () => {
    const response = respond(verdict([decision('api', { remaining: 9 }), shadow]))
    expect(response.allowed).toBe(true)
    expect(sent(response.headers).RateLimit).toBe('"api";r=9;t=60')
    expect(respond(verdict([shadow])).headers).toEqual([])
  })

  it('are listed with shadowPolicies: true', () => {
    const headers = sent(
      respond(verdict([decision('api'), shadow]), { shadowPolicies: true }).headers,
    )
    expect(headers.RateLimit).toBe('"api";r=99;t=60, "shadow-new";r=0;t=5')
  })
})

describe('the limiter’s made-up decisions are never reported as quota', () => {
  it('store-unavailable: 503 with the temporary-reduced-capacity problem and the limiter’s retry time', () => {
    const failed = decision('login', {
      allowed: false,
      storeFailed: true,
      retryAfterMs: 1000,
      resetAfterMs: 1000,
    })
    const response = respond(verdict([failed], 'store-unavailable', { storeFailed: true }))
    expect(response.status).toBe(503)
    expect(response.headers).toEqual([
      ['Retry-After', '1'],
      ['Content-Type', 'application/problem+json'],
    ])
    expect(response.problem).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      status: 503,
      'violated-policies': ['login'],
      retryAfter: 1,
    })
  })

  it('store-unavailable through a real limiter whose store throws, fail-closed', async () => {
    const limiter = createLimiter({
      logger: { warn() {} },
      storeErrorRetryAfterMs: 2500,
      store: {
        consume() {
          throw new Error('connection refused')
        },
        refund() {},
      },
      rules: [
        {
          id: 'login',
          algorithm: 'sliding_log',
          limit: 5,
          window: '60s',
          onStoreError: 'closed',
          match: { identity: 'ip' },
        },
      ],
    })
    const v = await limiter.decide(
      { method: 'POST', path: '/v1/login', identities: { ip: '192.0.2.1' } },
      { now: 0 },
    )
    const response = respond(v)
    expect(response.status).toBe(503)
    expect(sent(response.headers)).toEqual({
      'Retry-After': '3',
      'Content-Type': 'application/problem+json',
    })
  })

  it('missing-identity: 400 by default, no Retry-After (waiting does not help)', async () => {
    const limiter = createLimiter({
      rules: [
        {
          id: 'per-key',
          algorithm: 'token_bucket',
          rate: 10,
          burst: 20,
          onMissingIdentity: 'deny',
          match: { identity: 'api_key' },
        },
      ],
    })
    const v = await limiter.decide(
      { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } },
      { now: 0 },
    )
    expect(v.reason).toBe('missing-identity')
    const response = respond(v)
    expect(response.status).toBe(400)
    expect(response.headers).toEqual([['Content-Type', 'application/problem+json']])
    expect(response.problem).toMatchObject({
      type: 'about:blank',
      title: 'Bad Request',
      code: 'missing-identity',
    })
  })

  it('missing-identity as 401 carries the configured WWW-Authenticate challenge', () => {
    const missing = decision('per-key', { allowed: false, retryAfterMs: undefined, key: undefined })
    const response = respond(verdict([missing], 'missing-identity'), {
      missingIdentity: { status: 401, wwwAuthenticate: 'Bearer realm="api"' },
    })
    expect(response.status).toBe(401)
    expect(response.headers).toContainEqual(['WWW-Authenticate', 'Bearer realm="api"'])
    expect(response.problem?.title).toBe('Unauthorized')
  })
})

describe('respondToError', () => {
  it('answers a cost that can never fit with a non-retryable 400, naming the rule', () => {
    const limiter = createLimiter({
      rules: [
        {
          id: 'labels-bulk',
          algorithm: 'token_bucket',
          rate: 10,
          burst: 20,
          match: { identity: 'api_key' },
        },
      ],
    })
    let caught: unknown
    try {
      limiter.check('api_key:k', 'labels-bulk', { cost: 30, now: 0 })
    } catch (error) {
      caught = error
    }
    const response = createResponder().respondToError(caught)
    expect(response?.status).toBe(400)
    expect(response?.headers.map(([name]) => name)).toEqual(['Content-Type'])
    expect(response?.problem).toMatchObject({ code: 'ERR_RL_COST_EXCEEDS_CAPACITY', status: 400 })
    expect(response?.problem?.detail).toContain('"labels-bulk"')
  })

  it('answers a store error with 503 and leaves other errors to the adapter', () => {
    const responder = createResponder()
    expect(
      responder.respondToError(new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down'))?.status,
    ).toBe(503)
    expect(
      responder.respondToError(new RateLimitError('ERR_RL_INVALID_RULE', 'bad')),
    ).toBeUndefined()
    expect(responder.respondToError(new Error('boom'))).toBeUndefined()
  })
})

describe('Access-Control-Expose-Headers', () => {
  it('lists every name this configuration can send, on responses that carry rate-limit headers', () => {
    const expose =
      'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After'
    const responder = createResponder({ exposeHeaders: true })
    expect(responder.respond(verdict([decision('a')]), 0).headers).toContainEqual([
      'Access-Control-Expose-Headers',
      expose,
    ])
    expect(
      responder.respond(verdict([decision('a', { allowed: false })]), 0).headers,
    ).toContainEqual(['Access-Control-Expose-Headers', expose])
    expect(responder.respond(verdict([]), 0).headers).toEqual([])
    expect(
      createResponder({ standardHeaders: 'draft-6', legacyHeaders: false }).headerNames,
    ).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'RateLimit-Policy',
      'Retry-After',
    ])
  })
})

describe('policies in whole seconds', () => {
  it('scales sub-second windows exactly', () => {
    expect(quotaPerSeconds(10, 100)).toEqual({ q: 100, w: 1 })
    expect(quotaPerSeconds(1, 1500)).toEqual({ q: 2, w: 3 })
    expect(quotaPerSeconds(100, 60_000)).toEqual({ q: 100, w: 60 })
  })

  it('refreshes a rule’s cached policy when its quota changes', () => {
    const responder = createResponder()
    const first = responder.respond(
      verdict([decision('plan', { policy: { quota: 100, windowMs: 60_000 } })]),
      0,
    )
    const second = responder.respond(
      verdict([decision('plan', { policy: { quota: 500, windowMs: 60_000 } })]),
      0,
    )
    expect(sent(first.headers)['RateLimit-Policy']).toBe('"plan";q=100;w=60')
    expect(sent(second.headers)['RateLimit-Policy']).toBe('"plan";q=500;w=60')
  })
})

describe('partition keys', () => {
  it('are added only by respondAsync, from the decision key or a chosen text', async () => {
    const v = verdict([decision('api', { key: 'api_key:k_1' })])
    const sync = createResponder({ partitionKey: true })
    expect(sync.usesPartitionKeys).toBe(true)
    expect(sent(sync.respond(v, 0).headers).RateLimit).not.toContain('pk=')
    const byKey = sent((await sync.respondAsync(v, 0)).headers).RateLimit
    const custom = createResponder({ partitionKey: (d) => `${d.rule}:tenant-7` })
    const byTenant = sent((await custom.respondAsync(v, 0)).headers).RateLimit
    expect(byKey).toMatch(/^"api";r=99;t=60;pk=:[A-Za-z0-9+/]{16}:$/)
    expect(byTenant).toMatch(/;pk=:[A-Za-z0-9+/]{16}:$/)
    expect(byTenant).not.toBe(byKey)
    expect(createResponder().usesPartitionKeys).toBe(false)
  })
})

describe('options are checked at construction', () => {
  it.each([
    [{ standardHeaders: 'draft-12' }, 'standardHeaders'],
    [{ legacyReset: 'ms' }, 'legacyReset'],
    [{ missingIdentity: { status: 401 } }, 'missingIdentity'],
    [{ missingIdentity: { status: 500 } }, 'missingIdentity'],
  ])('%j names %s', (options, field) => {
    expect(() => createResponder(options as ResponderOptions)).toThrow(field)
  })
})
