import { isRateLimitError, type MapStore, mapStore, memoryStore, tokenBucket } from '@tollgate/core'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { describeStore } from './support/store-suite.js'
import { algorithmArb } from './support/trace.js'

// Hundreds of traces per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 60_000 })

describeStore('map store', { create: () => mapStore() })
describeStore('map store with room for 3 keys', {
  create: () => mapStore({ maxKeys: 3 }),
  // Dropping a counting key changes decisions: only the reference-free contract applies.
  compareWithReference: false,
})

describe('map store', () => {
  it('decides as the memory store does through its single-charge path', () => {
    fc.assert(
      fc.property(
        algorithmArb,
        fc.array(
          fc.record({
            key: fc.constantFrom('a', 'b', 'c'),
            cost: fc.integer({ min: 0, max: 3 }),
            dt: fc.nat(2000),
          }),
          { maxLength: 40 },
        ),
        (algorithm, calls) => {
          const small = mapStore()
          const compact = memoryStore()
          let now = 1_000_000
          for (const { key, cost, dt } of calls) {
            now += dt
            if (cost > algorithm.limit) continue
            expect(small.consumeOne('r', algorithm, key, cost, now)).toEqual(
              compact.consumeOne('r', algorithm, key, cost, now),
            )
          }
        },
      ),
    )
  })

  it('holds at most maxKeys, dropping the least recently used, and counts the counting ones it dropped', () => {
    const store: MapStore = mapStore({ maxKeys: 2 })
    const bucket = tokenBucket({ rate: 1, periodMs: 60_000, burst: 2 })
    store.consumeOne('r', bucket, 'a', 1, 0)
    store.consumeOne('r', bucket, 'b', 1, 0)
    store.consumeOne('r', bucket, 'a', 1, 0) // a used last: b goes first
    store.consumeOne('r', bucket, 'c', 1, 0)
    expect(store.size).toBe(2)
    expect(store.evictions).toBe(1)
    expect(store.consumeOne('r', bucket, 'a', 1, 0).allowed).toBe(false) // a kept its count
    expect(store.consumeOne('r', bucket, 'b', 1, 0).remaining).toBe(1) // b starts anew
  })

  it('keeps the states of one rule id apart when it arrives with another algorithm', () => {
    const store = mapStore()
    const small = tokenBucket({ rate: 1, burst: 1 })
    const large = tokenBucket({ rate: 1, burst: 5 })
    expect(store.consumeOne('r', small, 'k', 1, 0).remaining).toBe(0)
    expect(store.consumeOne('r', large, 'k', 1, 0).remaining).toBe(4)
    expect(store.consumeOne('r', small, 'k', 1, 0).allowed).toBe(false)
  })

  it('keeps the states of one rule id apart when one request charges it with two algorithms', async () => {
    const store = mapStore()
    const small = tokenBucket({ rate: 1, burst: 1 })
    const large = tokenBucket({ rate: 1, burst: 5 })
    const charge = (algorithm: typeof small, cost: number) => ({
      rule: 'r',
      algorithm,
      key: 'k',
      cost,
      shadow: false,
    })
    const outcome = await store.consume([charge(small, 1), charge(large, 2)], 0)
    expect(outcome.decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 0],
      [true, 3],
    ])
    expect(store.consumeOne('r', small, 'k', 1, 0).allowed).toBe(false)
    expect(store.consumeOne('r', large, 'k', 1, 0).remaining).toBe(2)
  })

  it('refuses a maxKeys it cannot hold, naming it', () => {
    for (const maxKeys of [0, 1.5, -1, 2 ** 24, Number.NaN]) {
      let thrown: unknown
      try {
        mapStore({ maxKeys })
      } catch (error) {
        thrown = error
      }
      expect(isRateLimitError(thrown) && thrown.field).toBe('maxKeys')
    }
  })
})
