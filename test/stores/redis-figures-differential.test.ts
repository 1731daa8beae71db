// Per-client figures on Redis: random traces in which each charge comes with one of several
// figures of one rule, through the memory store and the Redis store, with injected time: every
// decision must be identical, for each strategy and family, in both key layouts.
import { type RedisStore, redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import { FAMILIES, type Family, STRATEGIES } from './support/carry-trace.js'
import { expectSameFiguresAsMemory, figuresTraceArb } from './support/figures-trace.js'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

// Hundreds of Redis round trips per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 120_000 })

const families = Object.keys(FAMILIES) as Family[]

describe.skipIf(!redisAvailable).each(['rule', 'identity'] as const)(
  'per-client figures on the Redis store (layout %s) vs the memory store',
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
        prefix: uniquePrefix('figures-diff'),
        expiryMarginMs: 600_000,
        timeoutMs: 10_000,
        layout,
      })

    describe.each(families)('%s', (family) => {
      it.each(STRATEGIES)(
        'carries a key between figures by %s as the memory store',
        async (strategy) => {
          await fc.assert(
            fc.asyncProperty(figuresTraceArb(family), (trace) =>
              expectSameFiguresAsMemory(store(), strategy, trace),
            ),
            { numRuns: 30 },
          )
        },
      )
    })
  },
)
