import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { concurrency } from './concurrency.js'

describe('concurrency', () => {
  it('never holds more than its limit, and holds exactly what was taken and not given back', () => {
    const operation = fc.oneof(
      fc.record({ take: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ give: fc.nat({ max: 20 }) }),
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(operation, { maxLength: 60 }),
        (limit, ops) => {
          const algorithm = concurrency({ limit })
          const slots = [0]
          algorithm.init(slots, 0, 0)
          /** What the model holds: each admitted take, until a give names it. */
          const taken: number[] = []
          for (const [i, op] of ops.entries()) {
            const held = taken.reduce((sum, cost) => sum + cost, 0)
            if ('take' in op) {
              const cost = Math.min(op.take, limit)
              const decision = algorithm.decide(slots, 0, cost, i, true)
              expect(decision.allowed).toBe(cost === 0 || held + cost <= limit)
              if (decision.allowed) {
                taken.push(cost)
                expect(decision.remaining).toBe(limit - held - cost)
              } else {
                expect(decision.retryAfterMs).toBe(1000)
                expect(decision.remaining).toBe(limit - held)
              }
            } else if (taken.length > 0) {
              const [cost] = taken.splice(op.give % taken.length, 1)
              algorithm.refund(slots, 0, cost!, i, i)
            }
            const now = taken.reduce((sum, cost) => sum + cost, 0)
            expect(slots[0]).toBe(now)
            expect(slots[0]).toBeLessThanOrEqual(limit)
            // Only an empty state may be dropped by a store.
            expect(algorithm.freshAt(slots, 0) <= i).toBe(now === 0)
          }
        },
      ),
    )
  })

  it('a dry run takes nothing; its policy counts requests at once', () => {
    const algorithm = concurrency({ limit: 1 })
    const slots = [0]
    expect(algorithm.decide(slots, 0, 1, 0, false).allowed).toBe(true)
    expect(slots[0]).toBe(0)
    expect(algorithm.policy).toEqual({ quota: 1, windowMs: 0, unit: 'concurrent-requests' })
    expect(() => concurrency({ limit: 0 })).toThrow(/limit/)
  })
})
