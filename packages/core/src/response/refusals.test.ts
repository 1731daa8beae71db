import { describe, expect, it } from 'vitest'
import { RateLimitError } from '../errors.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Verdict } from '../limiter/types.js'
import { createResponder, type ResponderOptions } from './responder.js'
import { decision, sent, verdict } from './test-fixtures.js'

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
