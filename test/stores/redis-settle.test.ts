// Settling on the Redis store against a real server: what the store does with a settlement given
// twice or after its key expired (as the memory store does), the expiry of a state in debt,
// refusals, and a limiter whose rules settle on Redis.
import {
  concurrency,
  createLimiter,
  defineRules,
  fixedWindow,
  leakyQueue,
  memoryStore,
  slidingLog,
  tokenBucket,
} from '@tollgate/core'
import { type Algorithm, type Charge, reservable, type Settlement } from '@tollgate/core/store'
import { type RedisStore, redisKey, redisStore } from '@tollgate/redis'
import { manualClock } from '@tollgate/test-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'
import { normalise } from './support/trace.js'

const bucket = reservable(tokenBucket({ rate: 10, burst: 20 }))
const window = reservable(fixedWindow({ limit: 20, windowMs: 60_000 }))
const log = reservable(slidingLog({ limit: 20, windowMs: 60_000 }))

// A key per algorithm: deleting one (its expiry) leaves the others' states alone in either layout.
const charge = (algorithm: Algorithm, cost: number): Charge => ({
  rule: `rule-${algorithm.name}`,
  algorithm,
  key: `ip:${algorithm.name}`,
  cost,
  shadow: false,
})
const settlement = (algorithm: Algorithm, cost: number, actual: number): Settlement => ({
  ...charge(algorithm, cost),
  actual,
})

describe.skipIf(!redisAvailable)('settling on the Redis store', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  const store = (
    layout: 'rule' | 'identity' = 'rule',
    expiryMarginMs = 600_000,
    prefix = uniquePrefix('settle'),
  ): RedisStore =>
    redisStore({
      client: target.client,
      time: 'caller',
      prefix,
      expiryMarginMs,
      timeoutMs: 10_000,
      layout,
    })

  describe.each(['rule', 'identity'] as const)('layout %s', (layout) => {
    it('applies a settlement given twice twice, as the memory store does (the limiter closes the verdict)', async () => {
      const redis = store(layout)
      const memory = memoryStore()
      for (const algorithm of [bucket, window, log]) {
        const reserve = [charge(algorithm, 4)]
        memory.consume(reserve, 1_000)
        await redis.consume(reserve, 1_000)
        for (const actual of [9, 9]) {
          memory.settle([settlement(algorithm, 4, actual)], 1_000, 1_000)
          await redis.settle([settlement(algorithm, 4, actual)], 1_000, 1_000)
        }
        const probe = [charge(algorithm, 0)]
        expect(normalise((await redis.consume(probe, 1_000)).decisions), algorithm.name).toEqual(
          normalise(memory.consume(probe, 1_000).decisions),
        )
        expect(memory.consume(probe, 1_000).decisions[0]!.remaining).toBe(20 - 14)
      }
    })

    it('after its key expired, gives nothing back and charges an extra from a fresh state at now, as the memory store', async () => {
      const prefix = uniquePrefix('settle')
      const redis = store(layout, 600_000, prefix)
      const memory = memoryStore()
      for (const algorithm of [bucket, window, log]) {
        const reserve = [charge(algorithm, 4)]
        memory.consume(reserve, 1_000)
        await redis.consume(reserve, 1_000)
        // What the key's expiry does at its deadline (the memory store: what a sweep does). In
        // the identity layout a log keeps a key of its own, the rule layout's.
        const { rule, key } = reserve[0]!
        memory.forget(rule, algorithm, key)
        await target.command(undefined, [
          'DEL',
          redis.keyOf(rule, key),
          redisKey(prefix, rule, key),
        ])
        for (const actual of [1, 7]) {
          memory.settle([settlement(algorithm, 4, actual)], 1_000, 2_000)
          await redis.settle([settlement(algorithm, 4, actual)], 1_000, 2_000)
          const probe = [charge(algorithm, 0)]
          expect(normalise((await redis.consume(probe, 2_000)).decisions)).toEqual(
            normalise(memory.consume(probe, 2_000).decisions),
          )
        }
        // The give-back of 3 found nothing; the extra of 3 was charged at 2,000.
        expect(memory.consume([charge(algorithm, 0)], 2_000).decisions[0]!.remaining).toBe(17)
      }
    })
  })

  it.each(['rule', 'identity'] as const)(
    'on the server’s clock, settles against the time the consume answered (layout %s)',
    async (layout) => {
      const redis = redisStore({ client: target.client, prefix: uniquePrefix('settle'), layout })
      // Real time passes between these calls: a token an hour, windows of a day.
      const day = 86_400_000
      for (const algorithm of [
        reservable(tokenBucket({ rate: 1, periodMs: 3_600_000, burst: 20 })),
        reservable(fixedWindow({ limit: 20, windowMs: day })),
        reservable(slidingLog({ limit: 20, windowMs: day })),
      ]) {
        // The caller's `now` is only read for a calendar window's boundaries: far off on purpose.
        const { at } = await redis.consume([charge(algorithm, 5)], 0)
        await redis.settle([settlement(algorithm, 5, 2)], at, 0)
        const left = (await redis.consume([charge(algorithm, 0)], 0)).decisions[0]!.remaining
        // A log gives back only entries logged at `at`: the server's time, as the consume's.
        expect(left, algorithm.name).toBe(18)
        await redis.settle([settlement(algorithm, 2, 12)], at, 0)
        const after = (await redis.consume([charge(algorithm, 0)], 0)).decisions[0]!.remaining
        expect(after, algorithm.name).toBe(8)
      }
    },
  )

  it('keeps a state in debt until the debt is repaid, plus the margin', async () => {
    const redis = store('rule', 0)
    // 20 reserved, 60 used: 20 below empty, refilling 10 a second: full again 4 s later.
    await redis.consume([charge(bucket, 20)], 10_000)
    await redis.settle([settlement(bucket, 20, 60)], 10_000, 10_000)
    const key = redis.keyOf(`rule-${bucket.name}`, `ip:${bucket.name}`)
    const ttl = Number(await target.command(undefined, ['PTTL', key]))
    // The state's own time to fresh (on a loaded machine a few ms may have passed since).
    expect(ttl).toBeGreaterThan(3_000)
    expect(ttl).toBeLessThanOrEqual(4_000)
    const denied = (await redis.consume([charge(bucket, 1)], 10_000)).decisions[0]!
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 2_100 })
  })

  it('refuses a settlement of a rule that cannot settle, or a bad actual cost, before writing anything', async () => {
    const redis = store()
    await redis.consume([charge(window, 5)], 0)
    const good = settlement(window, 5, 0)
    for (const algorithm of [leakyQueue({ rate: 1, burst: 2 }), concurrency({ limit: 2 })]) {
      await expect(redis.settle([good, settlement(algorithm, 1, 0)], 0, 0)).rejects.toMatchObject({
        code: 'ERR_RL_INVALID_RULE',
        field: 'settle',
      })
    }
    await expect(redis.settle([good, { ...good, actual: -1 }], 0, 0)).rejects.toMatchObject({
      code: 'ERR_RL_INVALID_COST',
      field: 'actual',
    })
    expect((await redis.consume([charge(window, 0)], 0)).decisions[0]!.remaining).toBe(15)
  })

  it('settles through a limiter: not refused at start-up; a second settle is closed, a late one expired', async () => {
    const clock = manualClock(1_000_000)
    const limiter = createLimiter({
      rules: defineRules([
        {
          id: 'tokens',
          match: { identity: 'api_key' },
          algorithm: 'token_bucket',
          rate: 100,
          period: '1m',
          burst: 400,
          cost: 100,
          settle: '1m',
        },
      ]),
      store: store('identity'),
      clock,
    })
    const facts = { method: 'POST', path: '/v1/chat', identities: { api_key: 'k_1' } }
    const first = await limiter.decide(facts)
    expect(await limiter.settle!(first, 30)).toMatchObject({ status: 'settled' })
    expect(await limiter.settle!(first, 30)).toMatchObject({ status: 'closed' })
    const second = await limiter.decide(facts)
    // 70 came back: 400 − 30 − 100 left.
    expect(second.decisions[0]).toMatchObject({ allowed: true, remaining: 270 })
    clock.advance(60_001)
    expect(await limiter.settle!(second, 400)).toMatchObject({
      status: 'expired',
      expired: ['tokens'],
    })
  })
})
