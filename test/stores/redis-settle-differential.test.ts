// Random traces of reservations, settlements, cancellations and time through the memory store and
// the Redis store, with injected time (the caller's clock): every decision, and every state as
// an inspection reads it after each step, must be identical, for every algorithm that settles.
import { reservable } from '@tollgate/core/store'
import { type RedisStore, redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import { redisOfTheFile, redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { expectSameAsMemory, settleTraceArb, settlingArb } from './support/settle-trace.js'
import { ioredisTarget, type Target } from './support/targets.js'
import { calendarBoundaryArbs, extremeAlgorithmArb, longLogArbs } from './support/trace.js'

// Hundreds of Redis round trips per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 120_000 })

// Thousands of rule sets, each with scripts of its own: on a Redis of the file's own.
const redisUrl = redisOfTheFile()

describe.skipIf(!redisServerBinary).each(['rule', 'identity'] as const)(
  'settling on the Redis store (layout %s) vs the memory store',
  (layout) => {
    let target: Target
    beforeAll(async () => {
      target = await ioredisTarget(redisUrl())
    })
    afterAll(async () => {
      await target?.close()
    })

    // Nothing may expire on the server's clock while a trace runs on its own; a loaded machine
    // may take longer than the default 250 ms budget to answer a call.
    const store = (): RedisStore =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('settle-diff'),
        expiryMarginMs: 600_000,
        timeoutMs: 10_000,
        layout,
      })

    it('reserves, settles and cancels on several rules exactly as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(settleTraceArb(settlingArb), (trace) =>
          expectSameAsMemory(store(), trace),
        ),
        { numRuns: 300 },
      )
    })

    // Their states keep the version and figures beside them (scripts/carry.lua.ts).
    it('settles rules that declare a version exactly as the memory store', async () => {
      const versioned = settlingArb.map((algorithm) => ({
        ...algorithm,
        versioned: { version: 2, onChange: undefined },
      }))
      await fc.assert(
        fc.asyncProperty(settleTraceArb(versioned), (trace) => expectSameAsMemory(store(), trace)),
        { numRuns: 150 },
      )
    })

    it('settles long sliding logs, packed and as lists, exactly as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(
          settleTraceArb(longLogArbs.algorithms.map(reservable), {
            costs: longLogArbs.costs.map((cost) => Math.max(1, cost)),
          }),
          (trace) => expectSameAsMemory(store(), trace),
        ),
        { numRuns: 40 },
      )
    })

    // Capacities and windows whose integers come close to 2^53, estimates of any size up to them,
    // debts of one burst: where a rounded division or a sum past 2^53 would show.
    it('settles with parameters and costs near 2^53 exactly as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(
          settleTraceArb(extremeAlgorithmArb.map(reservable), {
            costs: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 2 ** 40 })),
          }),
          (trace) => expectSameAsMemory(store(), trace),
        ),
        { numRuns: 60 },
      )
    })

    it('settles calendar windows across their boundaries exactly as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(
          settleTraceArb(calendarBoundaryArbs.algorithms.map(reservable), { nearBoundaries: true }),
          (trace) => expectSameAsMemory(store(), trace),
        ),
        { numRuns: 40 },
      )
    })
  },
)
