import { memoryStore } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import express, { type RequestHandler } from 'express'
import request from 'supertest'
import { describe, expect, it } from 'vitest'
import rateLimit, { MemoryStore } from './index.js'

function appWith(limiter: RequestHandler) {
  const app = express()
  app.use(limiter)
  app.get('/', (_req, res) => {
    res.send('ok')
  })
  return app
}

const silent = { warn() {}, error() {} }

describe('windows driven by an injected clock', () => {
  it('opens the default store’s window at a key’s first request', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1, 0, 0, 12, 345))
    const app = appWith(rateLimit({ limit: 1, windowMs: 60_000, clock, logger: silent }))
    const first = await request(app).get('/')
    expect(first.headers['x-ratelimit-reset']).toBe(
      String(Math.ceil((clock.now() + 60_000) / 1000)),
    )
    clock.advance(59_999)
    expect((await request(app).get('/')).status).toBe(429)
    clock.advance(1)
    expect((await request(app).get('/')).status).toBe(200)
  })

  it('with a Tollgate store, counts in windows aligned to the epoch', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1, 0, 0, 12, 345))
    const limiter = rateLimit({
      limit: 1,
      windowMs: 60_000,
      store: memoryStore(),
      clock,
      logger: silent,
    })
    const app = appWith(limiter)
    const first = await request(app).get('/')
    expect(first.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2026, 0, 1, 0, 1) / 1000))
    expect((await request(app).get('/')).status).toBe(429)
    clock.set(Date.UTC(2026, 0, 1, 0, 1))
    expect((await request(app).get('/')).status).toBe(200)
    expect(await limiter.getKey('127.0.0.1')).toMatchObject({ totalHits: 1 })
    await limiter.resetKey('127.0.0.1')
    expect(await limiter.getKey('127.0.0.1')).toBeUndefined()
  })

  it('gives a skipped request’s hit back in the store', async () => {
    const clock = manualClock(Date.UTC(2026, 0, 1))
    const store = new MemoryStore()
    const app = appWith(
      rateLimit({ limit: 1, skipSuccessfulRequests: true, store, clock, logger: silent }),
    )
    for (let i = 0; i < 3; i++) expect((await request(app).get('/')).status).toBe(200)
    expect(await store.get('127.0.0.1')).toMatchObject({ totalHits: 0 })
  })
})

describe('MemoryStore', () => {
  it('counts, gives back and forgets keys', async () => {
    const store = new MemoryStore()
    store.init({ windowMs: 60_000 } as never)
    expect(await store.increment('k')).toMatchObject({ totalHits: 1, resetTime: expect.any(Date) })
    expect((await store.increment('k')).totalHits).toBe(2)
    await store.decrement('k')
    expect(await store.get('k')).toMatchObject({ totalHits: 1 })
    await store.resetKey('k')
    expect(await store.get('k')).toBeUndefined()
    await store.increment('a')
    await store.resetAll()
    expect((await store.increment('a')).totalHits).toBe(1)
    store.shutdown()
  })

  it('refuses a store of the wrong shape, naming the option', () => {
    expect(() => rateLimit({ store: { increment: 1 } as never })).toThrow(/store/)
    expect(() => rateLimit({ logger: { warn: 1 } as never })).toThrow(/logger/)
  })
})
