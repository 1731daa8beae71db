/**
 * An app that answers denials itself (`onLimited`) and fails: the failure reaches the
 * framework's error handling with the rate-limit fields still on the answer, on every major
 * version of Express and Koa the adapters support.
 */
import { rateLimit as expressRateLimit, type RuleConfig } from '@tollgate/express'
import { rateLimit as koaRateLimit } from '@tollgate/koa'
import { manualClock } from '@tollgate/test-utils'
import express from 'express'
import express4 from 'express4'
import Koa from 'koa'
import Koa2 from 'koa2'
import request from 'supertest'
import { describe, expect, it } from 'vitest'

const ONCE: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 1, window: '1m' },
]
const clock = () => manualClock(Date.UTC(2026, 0, 1))

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
])('%s: an async onLimited that rejects', (_name, create) => {
  it('goes to the error handler, which answers (no hanging request, no unhandled rejection)', async () => {
    const app = create()
    app.use(
      expressRateLimit(ONCE, {
        clock: clock(),
        onLimited: async () => {
          throw new Error('denial page unavailable')
        },
      }),
    )
    app.get('/', (_req, res) => {
      res.end('ok')
    })
    app.use((error: Error, _req: express.Request, res: express.Response, _next: unknown) => {
      res.status(500).end(error.message)
    })
    expect((await request(app).get('/')).status).toBe(200)
    const denied = await request(app).get('/').timeout(2000)
    expect(denied.status).toBe(500)
    expect(denied.text).toBe('denial page unavailable')
    expect(denied.headers['retry-after']).toBe('60')
  })
})

describe.each([
  ['Koa 3', Koa],
  ['Koa 2', Koa2 as unknown as typeof Koa],
])('%s: an onLimited that throws', (_name, Create) => {
  it.each([
    ['throws', (ctx: Koa.Context) => ctx.throw(429, 'slow down')],
    [
      'rejects',
      async (ctx: Koa.Context) => {
        ctx.throw(429, 'slow down')
      },
    ],
  ])('%s: Koa answers the error with the fields kept', async (_how, onLimited) => {
    const app = new Create()
    app.silent = true
    app.use(koaRateLimit(ONCE, { clock: clock(), onLimited }))
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    const server = app.listen(0)
    try {
      expect((await request(server).get('/')).status).toBe(200)
      const denied = await request(server).get('/')
      expect(denied.status).toBe(429)
      expect(denied.text).toBe('slow down')
      expect(denied.headers['retry-after']).toBe('60')
      expect(denied.headers['ratelimit']).toBe('"per-ip";r=0;t=60')
    } finally {
      server.close()
    }
  })
})
