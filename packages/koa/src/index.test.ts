import type { RuleConfig } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import Koa from 'koa'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from './index.js'

const perIp = (burst: number): RuleConfig[] => [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst },
]
const clock = () => manualClock(Date.UTC(2026, 0, 1))

/**
 * Two limiters with different fields, then a handler that throws. The second finds
 * `ctx.onerror` already set by the first, so it keeps its fields on the error another way.
 */
function useTwoLimitersThatThrow(app: Koa): void {
  app.use(rateLimit(perIp(5), { clock: clock(), legacyHeaders: true }))
  app.use(rateLimit(perIp(3), { clock: clock(), legacyHeaders: false, standardHeaders: 'draft-6' }))
  app.use(() => {
    throw new Error('boom')
  })
}

describe('@tollgate/koa', () => {
  it('keeps the rate-limit headers on a thrown error, which Koa would otherwise drop, and refunds it', async () => {
    const app = new Koa()
    app.silent = true
    app.use(rateLimit(perIp(2), { clock: clock(), legacyHeaders: true, refund: 'failed' }))
    app.use(() => {
      throw Object.assign(new Error('gone'), { status: 410, headers: { 'x-app': 'kept' } })
    })
    const server = app.listen(0)
    try {
      for (let i = 0; i < 3; i++) {
        const res = await request(server).get('/')
        expect(res.status).toBe(410)
        expect(res.headers).toMatchObject({
          'x-ratelimit-remaining': '1',
          ratelimit: '"per-ip";r=1;t=1',
          'x-app': 'kept',
        })
      }
    } finally {
      server.close()
    }
  })

  it('keeps the fields on a thrown error without refunds, through ctx.onerror', async () => {
    const app = new Koa()
    app.silent = true
    app.use(rateLimit(perIp(2), { clock: clock(), legacyHeaders: true, exposeHeaders: true }))
    app.use((ctx) => {
      if (ctx.path === '/boom') throw new Error('boom')
      // The app's own header: Koa drops it on an error, and it stays dropped.
      ctx.set('X-App', 'set')
      throw Object.assign(new Error('gone'), {
        status: 410,
        headers: { 'X-RateLimit-Limit': 'app' },
      })
    })
    const server = app.listen(0)
    try {
      const gone = await request(server).get('/')
      expect(gone.status).toBe(410)
      expect(gone.headers).toMatchObject({
        // The error's own value wins over the field's.
        'x-ratelimit-limit': 'app',
        'x-ratelimit-remaining': '1',
        ratelimit: '"per-ip";r=1;t=1',
        'ratelimit-policy': '"per-ip";q=1;w=1;tollgate-burst=2',
      })
      expect(gone.headers['access-control-expose-headers']).toContain('RateLimit-Policy')
      expect(gone.headers['x-app']).toBeUndefined()
      const boom = await request(server).get('/boom')
      expect(boom.status).toBe(500)
      expect(boom.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '2' })
    } finally {
      server.close()
    }
  })

  it('answers an error whose headers cannot be replaced as Koa would, never failing itself', async () => {
    const app = new Koa()
    app.silent = true
    app.use(rateLimit(perIp(2), { clock: clock(), legacyHeaders: true }))
    app.use(() => {
      const error = Object.assign(new Error('teapot'), { status: 418 })
      Object.defineProperty(error, 'headers', { get: () => ({ 'X-App': 'kept' }) })
      throw error
    })
    const res = await request(app.callback()).get('/')
    expect(res.status).toBe(418)
    expect(res.headers['x-app']).toBe('kept')
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined()
  })

  it('keeps the fields when an upstream middleware catches the error, and with two limiters', async () => {
    const app = new Koa()
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch {
        ctx.status = 503
        ctx.body = 'caught'
      }
    })
    useTwoLimitersThatThrow(app)
    // One field from each limiter: the first's X-RateLimit-*, the second's draft-6 fields.
    const bothLimitersFields = { 'x-ratelimit-remaining': '4', 'ratelimit-remaining': '2' }
    const caught = await request(app.callback()).get('/')
    expect(caught.status).toBe(503)
    expect(caught.headers).toMatchObject(bothLimitersFields)

    const uncaught = new Koa()
    uncaught.silent = true
    useTwoLimitersThatThrow(uncaught)
    const failed = await request(uncaught.callback()).get('/')
    expect(failed.status).toBe(500)
    expect(failed.headers).toMatchObject(bothLimitersFields)
  })

  it('appends to a rate-limit field that an earlier middleware set, on admissions and denials', async () => {
    const app = new Koa()
    app.use((ctx, next) => {
      ctx.set('RateLimit-Policy', '"upstream";q=1000;w=3600')
      return next()
    })
    app.use(rateLimit(perIp(1), { clock: clock(), legacyHeaders: true }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const server = app.listen(0)
    try {
      const policy = '"upstream";q=1000;w=3600, "per-ip";q=1;w=1'
      const admitted = await request(server).get('/')
      expect(admitted.status).toBe(200)
      expect(admitted.headers['ratelimit-policy']).toBe(policy)
      const denied = await request(server).get('/')
      expect(denied.status).toBe(429)
      expect(denied.headers['ratelimit-policy']).toBe(policy)
    } finally {
      server.close()
    }
  })

  it('counts a request Koa answers 404 (nothing set a body) as failed', async () => {
    const app = new Koa()
    app.use(rateLimit(perIp(1), { clock: clock(), legacyHeaders: true, refund: 'failed' }))
    const server = app.listen(0)
    try {
      for (let i = 0; i < 2; i++) expect((await request(server).get('/nothing')).status).toBe(404)
    } finally {
      server.close()
    }
  })

  it('lets the app answer denials itself, with the headers already set', async () => {
    const app = new Koa()
    app.use(
      rateLimit(perIp(1), {
        clock: clock(),
        legacyHeaders: true,
        onLimited: (ctx, denial) => {
          ctx.status = 503
          ctx.body = { error: 'busy', retryAfter: denial.problem.retryAfter }
        },
      }),
    )
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const server = app.listen(0)
    try {
      await request(server).get('/')
      const res = await request(server).get('/')
      expect(res.status).toBe(503)
      expect(res.body).toEqual({ error: 'busy', retryAfter: 1 })
      expect(res.headers['retry-after']).toBe('1')
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    } finally {
      server.close()
    }
  })

  it('reads the user from ctx.state.user, and the path before koa-style mounting rewrites it', async () => {
    const app = new Koa()
    app.use((ctx, next) => {
      Object.assign(ctx.state, { user: { id: 42 } })
      // What koa-mount does to a request for /v1/labels:batch mounted at /v1.
      ctx.path = '/labels:batch'
      return next()
    })
    const rules: RuleConfig[] = [
      {
        id: 'per-user-batch',
        match: { route: 'POST /v1/labels:batch', identity: 'user' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 3,
        onMissingIdentity: 'deny',
      },
    ]
    app.use(rateLimit(rules, { clock: clock(), legacyHeaders: true }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const res = await request(app.callback()).post('/v1/labels:batch?dry=1')
    expect(res.status).toBe(200)
    expect(res.headers['x-ratelimit-remaining']).toBe('2')
  })

  it('rethrows errors that are not the client’s to hear about', async () => {
    const app = new Koa()
    const errors: unknown[] = []
    app.on('error', (error) => errors.push(error))
    app.use(
      rateLimit(perIp(1), {
        plan: () => {
          throw new Error('plan lookup failed')
        },
      }),
    )
    expect((await request(app.callback()).get('/')).status).toBe(500)
    expect(errors).toEqual([expect.objectContaining({ message: 'plan lookup failed' })])
  })
})

describe('createRateLimit (Koa)', () => {
  it('answers as rateLimit does with the parts it names, and refuses a rule needing another', async () => {
    const { clockReader, createRateLimit, memoryStore, tokenBucket, xRateLimitHeaders } =
      await import('./index.js')
    const composed = createRateLimit({
      algorithms: { token_bucket: tokenBucket },
      store: memoryStore,
      headers: [xRateLimitHeaders],
      clock: clockReader,
    })
    const answers = async (middleware: ReturnType<typeof rateLimit>) => {
      const app = new Koa()
      app.use(middleware)
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      const server = app.listen(0)
      try {
        const seen = []
        for (let i = 0; i < 3; i++) {
          const res = await request(server).get('/')
          seen.push([res.status, res.headers['x-ratelimit-remaining'], res.headers['ratelimit']])
        }
        return seen
      } finally {
        server.close()
      }
    }
    const expected = await answers(rateLimit(perIp(2), { clock: clock(), legacyHeaders: true }))
    expect(expected.map(([status]) => status)).toEqual([200, 200, 429])
    expect(await answers(composed(perIp(2), { clock: clock(), legacyHeaders: true }))).toEqual(
      expected,
    )
    const log: RuleConfig[] = [
      { id: 'log', match: { identity: 'ip' }, algorithm: 'sliding_log', limit: 1, window: '1s' },
    ]
    expect(() => composed(log)).toThrow(/sliding_log is not in the algorithms option/)
  })
})
