// A queued request whose client goes away gives its slot back through the Redis refund script:
// the limiter refunds its charges, and the next arrival takes the freed slot, not a later one.
import { createLimiter, type RuleConfig, type Store } from '@tollgate/core'
import { redisStore } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

const rule = {
  id: 'queue',
  match: { identity: 'ip' },
  algorithm: 'leaky_queue',
  rate: 10,
  burst: 3,
} as RuleConfig
const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.9' } }

describe.skipIf(!redisAvailable)('a queue rule over the Redis store', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  it.each(['caller', 'server'] as const)(
    "gives an aborted request's slot to the next arrival (%s's clock)",
    async (time) => {
      const inner = redisStore({
        client: target.client,
        prefix: uniquePrefix('queue-refund'),
        time,
      })
      // Refunds run on their own once the wait is given up: the test awaits them here.
      const refunds: Promise<void>[] = []
      const store: Store = {
        consume: (charges, now) => inner.consume(charges, now),
        refund: (charges, chargedAt, now) => {
          const refunded = Promise.resolve(inner.refund(charges, chargedAt, now))
          refunds.push(refunded)
          return refunded
        },
      }
      const clock = manualTime(1_000_000)
      const limiter = createLimiter({
        rules: [rule],
        store,
        clock: clock.clock,
        timers: clock.timers,
      })
      const verdicts = []
      for (let i = 0; i < 4; i++) verdicts.push(await limiter.decide(facts))
      expect(verdicts.map((v) => v.allowed)).toEqual([true, true, true, true])
      // One slot every 100 ms (a slow server clock may have moved a few ms on).
      const waits = verdicts.map((v) => v.waitMs ?? 0)
      expect(waits[3]! - waits[0]!).toBeGreaterThan(200)
      const aborted = new AbortController()
      const held = limiter.hold(verdicts[3]!, { signal: aborted.signal })
      aborted.abort(new Error('gone'))
      await expect(held).rejects.toThrow('gone')
      expect(refunds).toHaveLength(1)
      await Promise.all(refunds)
      // The line is 3 long again: the next arrival waits as long as the aborted one did.
      const next = await limiter.decide(facts)
      expect(next.allowed).toBe(true)
      expect(next.waitMs).toBeGreaterThan(waits[2]!)
      expect(next.waitMs).toBeLessThanOrEqual(waits[3]!)
      // And the one after it finds the line full.
      expect((await limiter.decide(facts)).allowed).toBe(false)
    },
  )
})
