// The `refund` option's statuses, read as one comparison, against the two predicates they were
// read as before: over generated statuses (any integer, the boundary at 400 most often), through
// a kit, whose store counts the refunds.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { createAdapterKit, type Framework } from './kit.js'

const framework: Framework<undefined> = {
  method: () => 'GET',
  path: () => '/',
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
}
const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
]

/** The predicates `'failed'` and `'succeeded'` were read as before. */
const OLD = {
  failed: (status: number) => status >= 400,
  succeeded: (status: number) => status < 400,
}

describe('refund: failed or succeeded', () => {
  it('refunds the statuses it refunded before', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('failed' as const, 'succeeded' as const),
        fc.oneof(
          fc.integer({ min: 398, max: 402 }),
          fc.integer({ min: 100, max: 599 }),
          fc.integer(),
          fc.double(),
          fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0),
        ),
        (refund, status) => {
          const inner = memoryStore()
          let refunds = 0
          const store: Store = {
            consume: (charges, now) => inner.consume(charges, now),
            refund: (charges, chargedAt, now) => {
              refunds++
              return inner.refund(charges, chargedAt, now)
            },
          }
          const kit = createAdapterKit(RULES, { store, refund, clock: { now: () => 0 } }, framework)
          kit.enter(undefined, undefined)!.end(status)
          expect(refunds === 1).toBe(OLD[refund](status))
        },
      ),
      { numRuns: 500 },
    )
  })
})
