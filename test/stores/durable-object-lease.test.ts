/**
 * Leasing at the edge by composition: `leasedStore` (of @tollgate/redis, which wraps any store)
 * over the Durable Object store, four leased stores standing for four isolates of one Worker on
 * one hot key whose object runs in workerd (miniflare). The fixed window's bound with leases is
 * none: every window admits at most its limit (docs/concepts/redis.md#local-leases-for-hot-keys).
 */
import { fixedWindow } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { leasedStore } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type LimiterObjects, startLimiterObjects } from './support/durable-objects.js'

let objects: LimiterObjects

beforeAll(async () => {
  objects = await startLimiterObjects()
}, 60_000)

afterAll(async () => {
  await objects?.dispose()
})

const rule = { id: 'per-tenant', algorithm: 'fixed_window' } as const
const charge: Charge = {
  rule: 'per-tenant',
  algorithm: fixedWindow({ limit: 100, windowMs: 60_000 }),
  key: 'api_key:hot',
  cost: 1,
  shadow: false,
}

it('four isolates leasing one hot key admit at most its limit, and the object counts exactly what they admitted', async () => {
  const time = manualTime(0)
  const prefix = 'leased:'
  const isolates = Array.from({ length: 4 }, () =>
    leasedStore(objects.store({ prefix }), {
      rules: [rule],
      ttlMs: 1000,
      clock: time.clock,
      timers: time.timers,
    }),
  )
  let admitted = 0
  // 400 requests in one window, 40 at a time across the isolates, 100 ms apart.
  for (let wave = 0; wave < 10; wave++) {
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => isolates[i % 4]!.consume([charge], time.now())),
    )
    admitted += outcomes.filter((o) => o.decisions[0]!.allowed).length
    await time.advance(100)
  }
  expect(admitted).toBeLessThanOrEqual(100)
  const stats = isolates.map((isolate) => isolate.stats())
  // Leasing took part: some requests were decided in their isolate, without a subrequest.
  expect(stats.reduce((sum, s) => sum + s.localDecisions, 0)).toBeGreaterThan(0)
  // Every lease ends and gives its unspent units back: the object holds what was admitted.
  await Promise.all(isolates.map((isolate) => isolate.close()))
  const look = await objects.store({ prefix }).consume([{ ...charge, cost: 0 }], time.now())
  expect(100 - look.decisions[0]!.remaining).toBe(admitted)
})
