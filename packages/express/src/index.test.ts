import { type Limiter, RateLimitError, type RuleConfig, type Verdict } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import express, { type NextFunction, type Request, type Response } from 'express'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import { rateLimit } from './index.js'

const perIp = (burst: number): RuleConfig[] => [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst },
]
const clock = () => manualClock(Date.UTC(2026, 0, 1))

describe('@tollgate/express', () => {
  it('matches rules on the full path when mounted under a prefix, without the query', async () => {
    const app = express()
    const rules: RuleConfig[] = [
      {
        id: 'batch',
        match: { route: 'POST /v1/labels:batch', identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 5,
      },
    ]
    app.use('/v1', rateLimit(rules, { clock: clock(), legacyHeaders: true }))
    app.post('/v1/labels:batch', (_req, res) => {
      res.end('ok')
    })
    const res = await request(app).post('/v1/labels:batch?dry=1')
    expect(res.status).toBe(200)
    expect(res.headers['x-ratelimit-remaining']).toBe('4')
  })

  it('keeps the rate-limit headers on an error response, and refunds it', async () => {
    const app = express()
    app.use(rateLimit(perIp(2), { clock: clock(), legacyHeaders: true, refund: 'failed' }))
    app.get('/boom', () => {
      throw new Error('boom')
    })
    app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      res.status(500).end('error')
    })
    for (let i = 0; i < 3; i++) {
      const res = await request(app).get('/boom')
      expect(res.status).toBe(500)
      expect(res.headers['x-ratelimit-remaining']).toBe('1')
    }
  })

  it('lets the app answer denials itself, with the headers already set', async () => {
    const app = express()
    const verdicts: Verdict[] = []
    app.use(
      rateLimit(perIp(1), {
        clock: clock(),
        legacyHeaders: true,
        onLimited: (_req, res, _next, denial, verdict) => {
          if (verdict !== undefined) verdicts.push(verdict)
          res
            .status(denial.status)
            .json({ error: 'slow down', retryAfter: denial.problem.retryAfter })
        },
      }),
    )
    app.get('/', (_req, res) => {
      res.end('ok')
    })
    await request(app).get('/')
    const res = await request(app).get('/')
    expect(res.status).toBe(429)
    expect(res.body).toEqual({ error: 'slow down', retryAfter: 1 })
    expect(res.headers['retry-after']).toBe('1')
    expect(res.headers['x-ratelimit-remaining']).toBe('0')
    // The app's body is labelled by the app (res.json), not as the problem document it is not.
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(verdicts.map((v) => v.reason)).toEqual(['limit'])
  })

  it('reads the user id from req.user, as a plain id too', async () => {
    const app = express()
    app.use((req, _res, next) => {
      ;(req as { user?: unknown }).user = req.get('x-user')
      next()
    })
    const rules: RuleConfig[] = [
      { id: 'per-user', match: { identity: 'user' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
    ]
    app.use(rateLimit(rules, { clock: clock(), legacyHeaders: true }))
    app.get('/', (_req, res) => {
      res.end('ok')
    })
    expect((await request(app).get('/').set('x-user', 'u1')).headers['x-ratelimit-remaining']).toBe(
      '1',
    )
    expect((await request(app).get('/').set('x-user', 'u2')).headers['x-ratelimit-remaining']).toBe(
      '1',
    )
  })

  it('answers a request whose cost can never fit with a 400 and no Retry-After', async () => {
    // The rules refuse such costs at start-up; a limiter of the app's own can still throw it.
    const limiter: Limiter = {
      rules: [],
      store: { consume: () => ({ decisions: [], at: 0 }), refund: () => {} },
      clockStepsBack: 0,
      check: () => {
        throw new Error('unused')
      },
      decide: () => {
        throw new RateLimitError('ERR_RL_COST_EXCEEDS_CAPACITY', 'too big', { rule: 'bulk' })
      },
      acquire: () => Promise.reject(new Error('unused')),
      hold: (verdict) => Promise.resolve(verdict),
      refund: () => {},
    }
    const app = express()
    app.use(rateLimit(limiter))
    app.get('/', (_req, res) => {
      res.end('ok')
    })
    const res = await request(app).get('/')
    expect(res.status).toBe(400)
    expect(res.headers['retry-after']).toBeUndefined()
    expect(res.headers['content-type']).toBe('application/problem+json')
    expect(res.body).toMatchObject({ status: 400, code: 'ERR_RL_COST_EXCEEDS_CAPACITY' })
  })

  it('passes any other error to Express', async () => {
    const app = express()
    app.use(
      rateLimit(perIp(1), {
        plan: () => {
          throw new Error('plan lookup failed')
        },
      }),
    )
    const errors: unknown[] = []
    app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      errors.push(error)
      res.status(500).end()
    })
    expect((await request(app).get('/')).status).toBe(500)
    expect(errors).toEqual([new Error('plan lookup failed')])
  })

  it('refuses a rule that cannot work at start-up, naming the rule and field', () => {
    const rules = [
      {
        id: 'bulk',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 5,
        cost: 10,
      },
    ] as RuleConfig[]
    expect(() => rateLimit(rules)).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_RULE', rule: 'bulk', field: 'cost' }),
    )
    expect(() => rateLimit(perIp(1), { refund: 'sometimes' as 'failed' })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'refund' }),
    )
  })
})

describe('createRateLimit (Express)', () => {
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
      const app = express()
      app.use(middleware)
      app.get('/', (_req, res) => {
        res.end('ok')
      })
      const seen = []
      for (let i = 0; i < 3; i++) {
        const res = await request(app).get('/')
        seen.push([res.status, res.headers['x-ratelimit-remaining'], res.headers['ratelimit']])
      }
      return seen
    }
    const expected = await answers(rateLimit(perIp(2), { clock: clock(), legacyHeaders: true }))
    expect(expected.map(([status]) => status)).toEqual([200, 200, 429])
    expect(await answers(composed(perIp(2), { clock: clock(), legacyHeaders: true }))).toEqual(
      expected,
    )
    const routed: RuleConfig[] = [{ ...perIp(2)[0]!, match: { identity: 'ip', route: '/v1/*' } }]
    expect(() => composed(routed)).toThrow(
      /rule "per-ip": match\.route: needs routes: routeMatching in createRateLimit's parts/,
    )
  })
})
