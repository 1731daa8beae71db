// Four instances, each a limiter on its own fallback store over one shared store (Redis's
// stand-in) that the trace switches off and on, on one driven clock, with balanced load (the
// requests go round the instances): in every window, what they admit together stays within
// the stated bound (docs/concepts/failure-modes.md): the limit, plus what the shared store had
// admitted in that window before its last local decision (which the local shares cannot know).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RateLimitError } from '../../errors.js'
import { createLimiter } from '../../limiter/create-limiter.js'
import type { RuleConfig } from '../../rules/types.js'
import { memoryStore } from '../memory-store.js'
import type { Store } from '../types.js'
import { fallbackStore } from './fallback-store.js'

const INSTANCES = 4
const LIMIT = 100
const WINDOW_MS = 10_000
/** An instance returning to the store may not yet find the others' last local admission. */
const SLACK = INSTANCES - 1
const rule = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: LIMIT,
  window: '10s',
  onStoreError: 'fallback',
} as RuleConfig
const facts = { method: 'POST', path: '/login', identities: { ip: '192.0.2.1' } }

const step = fc.record({
  advanceMs: fc.oneof(
    { arbitrary: fc.constant(0), weight: 6 },
    { arbitrary: fc.integer({ min: 1, max: 200 }), weight: 3 },
    { arbitrary: fc.integer({ min: 200, max: 4000 }), weight: 1 },
  ),
  requests: fc.integer({ min: 1, max: 60 }),
  toggle: fc.oneof(
    { arbitrary: fc.constant(false), weight: 10 },
    { arbitrary: fc.constant(true), weight: 1 },
  ),
})

describe('fallbackStore bound, four instances, balanced load', () => {
  it('admits at most the limit per window, plus what the store admitted in it before its outages', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 20, maxLength: 300 }), async (trace) => {
        const inner = memoryStore()
        let down = false
        const shared: Store = {
          consume: async (charges, now) => {
            if (down) throw new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down')
            return inner.consume(charges, now)
          },
          refund: async (charges, at, now) => inner.refund(charges, at, now),
          timeoutMs: 250,
        }
        const limiters = Array.from({ length: INSTANCES }, () =>
          createLimiter({
            rules: [rule],
            store: fallbackStore(shared, { instances: INSTANCES, logger: false }),
            logger: false,
          }),
        )
        let now = 0
        // Per window: admitted in all; admitted by the shared store so far, and as of the
        // latest local decision (what the local shares could not know of).
        const windows = new Map<number, { total: number; shared: number; sharedBefore: number }>()
        let turn = 0
        for (const { advanceMs, requests, toggle } of trace) {
          now += advanceMs
          if (toggle) down = !down
          const window = Math.floor(now / WINDOW_MS)
          const counts = windows.get(window) ?? { total: 0, shared: 0, sharedBefore: 0 }
          windows.set(window, counts)
          for (let r = 0; r < requests; r++) {
            const verdict = await limiters[turn++ % INSTANCES]!.decide(facts, { now })
            const degraded = verdict.decisions[0]?.degraded === true
            if (degraded) counts.sharedBefore = counts.shared
            if (!verdict.allowed) continue
            counts.total++
            if (!degraded) counts.shared++
          }
        }
        for (const [window, counts] of windows) {
          expect(counts.total, `window ${window}`).toBeLessThanOrEqual(
            LIMIT + counts.sharedBefore + SLACK,
          )
        }
      }),
      { numRuns: 150 },
    )
  }, 120_000)
})
