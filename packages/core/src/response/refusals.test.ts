import { describe, expect, it } from 'vitest'
import { RateLimitError } from '../errors.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Verdict } from '../limiter/types.js'
import { createResponder, type ResponderOptions } from './responder.js'
import { decision, REFUSALS, sent, verdict } from './test-fixtures.js'

const respond = (v: Verdict, options: ResponderOptions = {}, now = 0) =>
  createResponder(options).respond(v, now)

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

describe('every refusal, as sent', () => {
  // The wire output verbatim: status, every field in order, and the body's exact text.
  const burst = decision('burst', {
    allowed: false,
    policy: { quota: 10, windowMs: 1000 },
    limit: 20,
    retryAfterMs: 2500,
    resetAfterMs: 2500,
  })
  const daily = decision('daily', { policy: { quota: 1000, windowMs: 86_400_000 }, remaining: 7 })
  const sentAs = (v: Verdict, options: ResponderOptions = {}) => {
    const { status, headers, body } = respond(v, options, 1_700_000_000_000)
    return { status, headers, body }
  }
  const policyFields = [
    ['RateLimit-Policy', '"burst";q=10;w=1;tollgate-burst=20, "daily";q=1000;w=86400'],
    ['RateLimit', '"burst";r=0;t=3, "daily";r=7;t=60'],
  ]

  it.each([
    [
      'limit',
      429,
      '{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Quota Exceeded","status":429,"detail":"Too many requests for the rate-limit policy \\"burst\\" (10 per 1 s, bursts of 20). Retry after 3 s.","violated-policies":["burst"],"retryAfter":3}',
    ],
    [
      'blocked',
      429,
      '{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Quota Exceeded","status":429,"detail":"Too many requests for the rate-limit policy \\"burst\\" (10 per 1 s, bursts of 20). Retry after 3 s.","violated-policies":["burst"],"retryAfter":3}',
    ],
    [
      'forbidden',
      403,
      '{"type":"about:blank","title":"Forbidden","status":403,"detail":"Blocked after repeated requests over the rate limit. Retry after 3 s.","violated-policies":["burst"],"retryAfter":3,"code":"penalty-forbidden"}',
    ],
  ] as const)('%s: %i, the fields, Retry-After and the problem', (reason, status, body) => {
    const refusal = reason === 'forbidden' ? { refusal: REFUSALS.forbidden } : {}
    expect(sentAs(verdict([burst, daily], reason, refusal), { exposeHeaders: true })).toEqual({
      status,
      headers: [
        ...policyFields,
        ['Retry-After', '3'],
        ['Content-Type', 'application/problem+json'],
        ['Access-Control-Expose-Headers', 'RateLimit, RateLimit-Policy, Retry-After'],
      ],
      body,
    })
  })

  it('deny-list: 403, no Retry-After (no rule was consulted)', () => {
    const denied = { allowed: false, reason: 'deny-list', refusal: REFUSALS['deny-list'] } as const
    expect(sentAs(verdict([], 'deny-list', denied))).toEqual({
      status: 403,
      headers: [['Content-Type', 'application/problem+json']],
      body: '{"type":"about:blank","title":"Forbidden","status":403,"detail":"This client is not allowed to use this API.","code":"deny-listed"}',
    })
  })

  it('missing-identity: the configured status, its challenge, no Retry-After', () => {
    const missing = decision('per-key', { allowed: false, retryAfterMs: undefined, key: undefined })
    const detail =
      'This endpoint is rate-limited per client identity (such as an API key or a signed-in user), and the request carries none.'
    expect(
      sentAs(verdict([missing], 'missing-identity'), {
        missingIdentity: { status: 401, wwwAuthenticate: 'Bearer' },
      }),
    ).toEqual({
      status: 401,
      headers: [
        ['WWW-Authenticate', 'Bearer'],
        ['Content-Type', 'application/problem+json'],
      ],
      body: `{"type":"about:blank","title":"Unauthorized","status":401,"detail":"${detail}","code":"missing-identity"}`,
    })
  })

  it('store-unavailable: 503, the failed rules named, the limiter’s retry time', () => {
    const failed = decision('login', { allowed: false, storeFailed: true, retryAfterMs: 1500 })
    expect(sentAs(verdict([failed, daily], 'store-unavailable', { storeFailed: true }))).toEqual({
      status: 503,
      headers: [
        ['RateLimit-Policy', '"daily";q=1000;w=86400'],
        ['RateLimit', '"daily";r=7;t=60'],
        ['Retry-After', '2'],
        ['Content-Type', 'application/problem+json'],
      ],
      body: '{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity","title":"Temporary Reduced Capacity","status":503,"detail":"Rate limits cannot be checked right now, and this endpoint does not serve requests unchecked. Retry after 2 s.","violated-policies":["login"],"retryAfter":2}',
    })
  })

  it('errors: a store error naming no rule lists no policy, and a cost that never fits', () => {
    const responder = createResponder()
    const down = responder.respondToError(new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down'))
    expect(down?.body).toBe(
      '{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity","title":"Temporary Reduced Capacity","status":503,"detail":"Rate limits cannot be checked right now, and this endpoint does not serve requests unchecked. Retry after 1 s.","retryAfter":1}',
    )
    const tooBig = responder.respondToError(
      new RateLimitError('ERR_RL_COST_EXCEEDS_CAPACITY', 'never fits'),
    )
    expect(tooBig?.body).toBe(
      '{"type":"about:blank","title":"Bad Request","status":400,"detail":"This request costs more than a rate-limit rule allows at once, so it can never be served; split it into smaller requests.","code":"ERR_RL_COST_EXCEEDS_CAPACITY"}',
    )
  })
})
