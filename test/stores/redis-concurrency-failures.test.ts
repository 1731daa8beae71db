// Concurrency slots on a Redis that goes away: taking follows each rule's onStoreError, a
// release or a renewal that fails escapes nowhere (no throw, no unhandled rejection), and slots
// are taken again once Redis is back.
import { once } from 'node:events'
import { createLimiter, type RuleConfig } from '@tollgate/core'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import { startRedisServer } from '@tollgate/test-utils/redis-server'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { drivenDeadlines } from './support/deadlines.js'
import { redisServerBinary, uniquePrefix } from './support/redis-env.js'

const TIMEOUT_MS = 150
const LEASE_MS = 3_000

const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled)
})
afterAll(() => {
  process.off('unhandledRejection', onUnhandled)
})

const request = { method: 'GET', path: '/report', identities: { ip: '203.0.113.7' } }

describe.skipIf(!redisServerBinary)('concurrency slots on a Redis that fails', () => {
  it('follows onStoreError while Redis is down, and takes slots again once it is back', async () => {
    const server = await startRedisServer()
    const redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 25 })
    redis.on('error', () => {})
    // Leases on one manual time, call deadlines on another: each moves when the test says.
    const time = manualTime(Date.now())
    const calls = drivenDeadlines(ioredisClient(redis), TIMEOUT_MS)
    const errors: unknown[] = []
    const limiterOf = (onStoreError: 'open' | 'closed') => {
      const rules: RuleConfig[] = [
        {
          id: `slots-${onStoreError}`,
          match: { identity: 'ip' },
          algorithm: 'concurrency',
          limit: 1,
          onStoreError,
        },
      ]
      const store = redisStore({
        client: calls.client,
        prefix: uniquePrefix('conc-fail'),
        timeoutMs: TIMEOUT_MS,
        leaseMs: LEASE_MS,
        clock: time.clock,
        timers: time.timers,
        deadlines: calls.deadlines,
      })
      const limiter = createLimiter({ rules, store, onError: (e) => errors.push(e), logger: false })
      return { limiter, store }
    }
    const open = limiterOf('open')
    const closed = limiterOf('closed')
    try {
      const held = await closed.limiter.decide(request)
      expect(held).toMatchObject({ allowed: true })
      expect((await closed.limiter.decide(request)).allowed).toBe(false)

      await server.kill()
      // Renewals fall due and fail (they time out with the next calls): they are tried again
      // later, and nothing escapes.
      const renewalsBefore = calls.sent()
      await time.advance(LEASE_MS)
      expect(calls.sent()).toBeGreaterThan(renewalsBefore)
      expect(await calls.timingOut(() => open.limiter.decide(request))).toMatchObject({
        allowed: true,
        storeFailed: true,
      })
      const refused = await calls.timingOut(() => closed.limiter.decide(request))
      expect(refused).toMatchObject({
        allowed: false,
        reason: 'store-unavailable',
        storeFailed: true,
      })
      // A verdict the store never decided holds nothing to give back.
      expect(closed.limiter.release!(refused)).toBeUndefined()
      // The release fails (reported, not thrown); the store stops renewing that lease, which
      // then ends on its own.
      await calls.timingOut(() => closed.limiter.release!(held))
      expect(closed.store.leases.held).toBe(0)
      expect(errors.length).toBeGreaterThanOrEqual(3)

      await server.restart()
      // Each attempt once the client is connected: a call waits for the connection (its
      // deadline does not move), so only a call failed by a dropped connection is tried again.
      let again = refused
      for (let attempt = 0; again.storeFailed === true && attempt < 50; attempt++) {
        if (redis.status !== 'ready') await once(redis, 'ready')
        again = await closed.limiter.decide(request)
      }
      // An empty server: the slot is free again.
      expect(again).toMatchObject({ allowed: true })
      await closed.limiter.release!(again)
      expect(closed.store.leases.held).toBe(0)
      // Every call has been answered (the server answers in order): a rejection nobody handled
      // is reported once the promise jobs of this turn have run.
      await new Promise(setImmediate)
      expect(unhandled).toEqual([])
    } finally {
      redis.disconnect()
      await server.stop()
    }
  }, 60_000)
})
