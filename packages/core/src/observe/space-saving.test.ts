import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SpaceSaving } from './space-saving.js'

/** Streams skewed like real traffic: a few heavy keys among many light ones. */
const streams = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('k0', 'k1', 'k2') },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 200 }).map((n) => `k${n}`) },
  ),
  { maxLength: 600 },
)

describe('SpaceSaving', () => {
  it('keeps its documented bounds against exact counts, on any stream', () => {
    fc.assert(
      fc.property(streams, fc.integer({ min: 1, max: 24 }), (stream, capacity) => {
        const sketch = new SpaceSaving(capacity)
        const exact = new Map<string, number>()
        stream.forEach((key, at) => {
          sketch.add(key, at)
          exact.set(key, (exact.get(key) ?? 0) + 1)
        })
        const kept = sketch.top()
        expect(kept.length).toBe(Math.min(capacity, exact.size))
        expect(sketch.total).toBe(stream.length)
        // Fixed memory: the counts of the kept keys add up to everything added.
        expect(kept.reduce((sum, hitter) => sum + hitter.count, 0)).toBe(stream.length)
        for (const hitter of kept) {
          const truth = exact.get(hitter.key)!
          expect(hitter.count - hitter.error).toBeLessThanOrEqual(truth)
          expect(truth).toBeLessThanOrEqual(hitter.count)
          expect(hitter.error).toBeLessThanOrEqual(sketch.errorBound)
        }
        expect(sketch.errorBound).toBeLessThanOrEqual(stream.length / capacity)
        const keptKeys = new Set(kept.map((hitter) => hitter.key))
        for (const [key, count] of exact) {
          if (count > stream.length / capacity) expect(keptKeys.has(key), key).toBe(true)
        }
      }),
    )
  })

  it('is exact while every key fits, with first and last seen', () => {
    const sketch = new SpaceSaving(4)
    for (const [key, at] of [
      ['a', 10],
      ['b', 20],
      ['a', 30],
    ] as const)
      sketch.add(key, at)
    expect(sketch.top()).toEqual([
      { key: 'a', count: 2, error: 0, firstSeen: 10, lastSeen: 30 },
      { key: 'b', count: 1, error: 0, firstSeen: 20, lastSeen: 20 },
    ])
    expect(sketch.errorBound).toBe(0)
  })

  it('refuses a capacity that is not a whole number ≥ 1', () => {
    expect(() => new SpaceSaving(0)).toThrow('capacity: expected a whole number ≥ 1, got 0')
  })
})
