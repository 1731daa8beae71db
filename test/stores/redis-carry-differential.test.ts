// Random traces of charges with changes of a rule's figures in between (limiter.update), through
// the memory store and the Redis store (a rule declaring `version`), with injected time: every
// decision must be identical, for each strategy and each family of algorithms that carry, in
// both key layouts.
import { type RedisStore, redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import {
  carryTraceArb,
  expectCarriedOnceFromItsFigures,
  expectSameCarryAsMemory,
  FAMILIES,
  type Family,
  STRATEGIES,
  skippedChangesArb,
} from './support/carry-trace.js'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

// Hundreds of Redis round trips per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 120_000 })

const families = Object.keys(FAMILIES) as Family[]

describe.skipIf(!redisAvailable).each(['rule', 'identity'] as const)(
  'rules changed while running, on the Redis store (layout %s) vs the memory store',
  (layout) => {
    let target: Target
    beforeAll(async () => {
      target = await ioredisTarget(REDIS_URL)
    })
    afterAll(async () => {
      await target?.close()
      await removeTestKeys()
    })

    // Nothing may expire on the server's clock while a trace runs on its own.
    const store = (): RedisStore =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('carry-diff'),
        expiryMarginMs: 600_000,
        timeoutMs: 10_000,
        layout,
      })

    describe.each(families)('%s', (family) => {
      it.each(STRATEGIES)('carries by %s exactly as the memory store', async (strategy) => {
        await fc.assert(
          fc.asyncProperty(carryTraceArb(family, strategy), (trace) =>
            expectSameCarryAsMemory(store(), trace),
          ),
          { numRuns: 40 },
        )
      })
    })

    it('carries a key that met none of several changes once, from its own figures to the newest', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...families).chain(skippedChangesArb), (trace) =>
          expectCarriedOnceFromItsFigures(store(), trace),
        ),
        { numRuns: 100 },
      )
    })

    it('carries through changes of every strategy in turn exactly as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...families).chain((family) => carryTraceArb(family, undefined, 6)),
          (trace) => expectSameCarryAsMemory(store(), trace),
        ),
        { numRuns: 60 },
      )
    })
  },
)
