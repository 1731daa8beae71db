// Random traces of penalised requests (several rules, a rule charged twice, blocks, forgetting)
// and operator's calls through the memory store and the Redis store, with injected time (the
// caller's clock): every decision and every offence record, and every key's peek after each
// step, must be identical. The penalties script is the server-side twin of the memory store's
// penalty logic; this is what keeps the two in step.
import { type RedisStore, redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'
import { expectPenaltiesSameAsMemory, penaltyTraceArb } from './support/penalty-trace.js'
import { redisOfTheFile, redisServerBinary, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

// Hundreds of Redis round trips per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 120_000 })

const redisUrl = redisOfTheFile()

describe.skipIf(!redisServerBinary).each(['rule', 'identity'] as const)(
  'penalties on the Redis store (layout %s) vs the memory store',
  (layout) => {
    let target: Target
    beforeAll(async () => {
      target = await ioredisTarget(redisUrl())
    })
    afterAll(async () => {
      await target?.close()
    })

    // Nothing may expire on the server's clock while a trace runs on its own.
    const store = (): RedisStore =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('penalty-diff'),
        expiryMarginMs: 600_000,
        timeoutMs: 10_000,
        layout,
      })

    it('penalises, blocks, forgets, peeks and resets exactly as the memory store', async () => {
      await fc.assert(
        fc.asyncProperty(penaltyTraceArb, (trace) => expectPenaltiesSameAsMemory(store(), trace)),
        { numRuns: 200 },
      )
    })
  },
)
