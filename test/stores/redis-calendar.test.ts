// Calendar windows on the Redis server's clock: the script cannot compute time zones, so the
// store sends the window holding the caller's clock and the next one; the script decides in the
// window holding its own time, and a key's state expires when that window ends.
import { fixedWindow } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

const DAY_MS = 86_400_000
const daily = fixedWindow({ limit: 2, calendar: 'day', timeZone: 'Asia/Kolkata' })
const charge = (cost: number): Charge => ({
  rule: 'daily',
  algorithm: daily,
  key: 'k',
  cost,
  shadow: false,
})

/** The end of the Kolkata day holding `t` (UTC+05:30, no daylight saving). */
const endOfDay = (t: number) => {
  const offset = 5.5 * 3_600_000
  return Math.floor((t + offset) / DAY_MS) * DAY_MS + DAY_MS - offset
}

describe.skipIf(!redisAvailable)('calendar windows on the Redis server clock', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  it.each([
    ['on time', 0],
    // Its window ended a day ago: the script moves to the next one, the server's.
    ['a day behind', -DAY_MS],
  ])('decide in the server’s own window when the caller’s clock is %s', async (_name, skew) => {
    const store = redisStore({ client: target.client, prefix: uniquePrefix('calendar') })
    const first = await store.consume([charge(2)], Date.now() + skew)
    expect(first.decisions[0]).toMatchObject({ allowed: true, remaining: 0 })
    expect(first.decisions[0]!.resetAfterMs).toBe(endOfDay(first.at) - first.at)
    const denied = await store.consume([charge(1)], Date.now() + skew)
    expect(denied.decisions[0]).toMatchObject({ allowed: false, remaining: 0 })
    expect(denied.decisions[0]!.retryAfterMs).toBe(endOfDay(denied.at) - denied.at)
    // The key expires when the server's day ends (PXAT, the default margin of 0).
    const key = store.keyOf('daily', 'k')
    expect(Number(await target.command(key, ['PEXPIRETIME', key]))).toBe(endOfDay(first.at))
  })

  it('counts in the caller’s window when the server has not reached it yet', async () => {
    const store = redisStore({ client: target.client, prefix: uniquePrefix('calendar') })
    // A caller a day ahead: its day is tomorrow's, which ends a day after the server's.
    const ahead = await store.consume([charge(1)], Date.now() + DAY_MS)
    expect(ahead.decisions[0]!.resetAfterMs).toBe(endOfDay(ahead.at) + DAY_MS - ahead.at)
    // A caller on time is held in that window (the stored one, after its own): nothing extra.
    const onTime = await store.consume([charge(2)], Date.now())
    expect(onTime.decisions[0]).toMatchObject({ allowed: false, remaining: 1 })
  })
})
