// redisMembership on a real Redis: instances counted by their heartbeats, one fewer when one
// leaves or its heartbeat ends, the last count kept while Redis fails. Heartbeats are sent by
// the test (`beat()`) and their timer runs on manual time: nothing waits.
import { ioredisClient, redisMembership } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'

describe.skipIf(!redisAvailable)('redisMembership', () => {
  const redis = new Redis(REDIS_URL)
  const client = ioredisClient(redis)
  afterAll(async () => {
    redis.disconnect()
    await removeTestKeys()
  })

  it('counts the instances with a live heartbeat, and one fewer when one leaves', async () => {
    const time = manualTime()
    const prefix = uniquePrefix('members')
    const make = () => redisMembership({ client, prefix, timers: time.timers, intervalMs: 1000 })
    const members = [make(), make(), make()]
    await Promise.all(members.map((m) => m.beat()))
    expect(await Promise.all(members.map((m) => m.beat()))).toEqual([3, 3, 3])
    expect(members[0]!.count()).toBe(3)
    await members[2]!.close()
    expect(await members[0]!.beat()).toBe(2)
    // A heartbeat that ended (its instance died) is no longer counted.
    await redis.zadd(`${prefix}:members:{gateways}`, 1, 'dead-instance')
    expect(await members[1]!.beat()).toBe(2)
    // The timer renews the heartbeat every intervalMs.
    const key = `${prefix}:members:{gateways}`
    await redis.del(key)
    await time.advance(1000)
    // The heartbeats the timers sent are in flight: beat() joins each rather than send another.
    await Promise.all(members.slice(0, 2).map((m) => m.beat()))
    expect(await redis.zcard(key)).toBe(2)
    await Promise.all(members.slice(0, 2).map((m) => m.close()))
    expect(await redis.exists(key)).toBe(0)
  })

  it('keeps the last count while Redis fails, and starts from initialCount', async () => {
    const failing = {
      evalsha: () => Promise.reject(new Error('connect ECONNREFUSED')),
      eval: () => Promise.reject(new Error('connect ECONNREFUSED')),
    }
    const time = manualTime()
    const membership = redisMembership({ client: failing, initialCount: 4, timers: time.timers })
    expect(await membership.beat()).toBe(4)
    expect(membership.count()).toBe(4)
    await membership.close()
  })

  it('refuses bad options, naming each', () => {
    expect(() => redisMembership({ client, intervalMs: 0 })).toThrow(
      /redisMembership\(\) intervalMs/,
    )
    expect(() => redisMembership({ client, intervalMs: 1000, ttlMs: 1500 })).toThrow(/ttlMs/)
    expect(() => redisMembership({ client, initialCount: 0 })).toThrow(/initialCount/)
    expect(() => redisMembership({ client, group: '' })).toThrow(/group/)
    expect(() => redisMembership({ client, interval: 5 } as never)).toThrow(/interval/)
    expect(() => redisMembership({ client: {} as never })).toThrow(/client/)
  })
})
