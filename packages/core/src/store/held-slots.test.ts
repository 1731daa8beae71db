import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { concurrency, tokenBucket } from '../algorithms/index.js'
import type { Algorithm } from '../algorithms/types.js'
import { mapStore } from './map-store.js'
import { memoryStore } from './memory-store.js'

/*
 * A concurrency key holds slots until they are given back; time frees nothing. A store short of
 * room (maxKeys, maxBytes) must never drop such a key, or its slots are handed out again while
 * the requests holding them still run. Checked against an exact model of the slots held.
 */

const T0 = 1_700_000_000_000
const LIMIT = 2
const slots = concurrency({ limit: LIMIT })

/** One store's single-charge paths, as the limiter calls them. */
type SlotStore = {
  take(algorithm: Algorithm, key: string, cost: number, now: number): boolean
  give(algorithm: Algorithm, key: string, cost: number, now: number): void
}

const stores: Record<string, (maxKeys: number) => SlotStore> = {
  memoryStore: (maxKeys) => {
    const store = memoryStore({ maxKeys, seed: 7 })
    return {
      take: (algorithm, key, cost, now) =>
        store.consumeOne('rule', algorithm, key, cost, now).allowed,
      give: (algorithm, key, cost, now) => store.refundOne('rule', algorithm, key, cost, now, now),
    }
  },
  mapStore: (maxKeys) => {
    const store = mapStore({ maxKeys })
    return {
      take: (algorithm, key, cost, now) =>
        store.consumeOne('rule', algorithm, key, cost, now).allowed,
      give: (algorithm, key, cost, now) =>
        store.refund([{ rule: 'rule', algorithm, key, cost, shadow: false }], now, now),
    }
  },
}

type Step = { readonly take: boolean; readonly key: number; readonly cost: number }

const step = fc.record({
  take: fc.boolean(),
  key: fc.integer({ min: 0, max: 11 }),
  cost: fc.integer({ min: 1, max: LIMIT }),
})

describe.each(Object.keys(stores))('%s under key pressure', (name) => {
  it('never hands out a held slot again, however many keys hold slots', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(step, { maxLength: 300 }),
        (maxKeys, steps: Step[]) => {
          const store = stores[name]!(maxKeys)
          // The model: what each key holds, by the costs its admitted takes charged.
          const held = new Map<number, number[]>()
          let now = T0
          for (const { take, key, cost } of steps) {
            now += 1
            const charges = held.get(key) ?? []
            if (take) {
              const inUse = charges.reduce((sum, c) => sum + c, 0)
              expect(store.take(slots, `k${key}`, cost, now)).toBe(inUse + cost <= LIMIT)
              if (inUse + cost <= LIMIT) held.set(key, [...charges, cost])
            } else if (charges.length > 0) {
              store.give(slots, `k${key}`, charges[0]!, now)
              held.set(key, charges.slice(1))
            }
          }
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('memoryStore under byte pressure', () => {
  it('keeps every key holding slots when another rule has filled maxBytes, and through its flood', () => {
    const store = memoryStore({ maxBytes: 1 << 20, seed: 11 })
    const flood = tokenBucket({ rate: 10, periodMs: 60_000, burst: 10 })
    const floodOf = (from: number, now: number) => {
      // 120,000 token-bucket keys: more than the whole budget holds.
      for (let i = from; i < from + 120_000; i++) store.consumeOne('flood', flood, `f${i}`, 1, now)
    }
    floodOf(0, T0)
    // 40,000 keys holding slots need more than the half of the budget a second table gets.
    const keys = 40_000
    for (let i = 0; i < keys; i++) {
      expect(store.consumeOne('slots', slots, `s${i}`, LIMIT, T0 + 1).allowed).toBe(true)
    }
    floodOf(120_000, T0 + 2)
    expect(store.evictions).toBeGreaterThan(0)
    for (let i = 0; i < keys; i++) {
      expect(store.consumeOne('slots', slots, `s${i}`, 1, T0 + 3).allowed).toBe(false)
    }
    for (let i = 0; i < keys; i++) store.refundOne('slots', slots, `s${i}`, LIMIT, T0 + 3, T0 + 4)
    for (let i = 0; i < keys; i++) {
      expect(store.consumeOne('slots', slots, `s${i}`, LIMIT, T0 + 5).allowed).toBe(true)
    }
  })

  it('grows a table whose every key holds slots past maxKeys, and drops them once given back', () => {
    const store = memoryStore({ maxKeys: 100, seed: 3 })
    for (let i = 0; i < 1_000; i++) store.consumeOne('slots', slots, `s${i}`, 1, T0)
    expect(store.size).toBe(1_000)
    for (let i = 0; i < 1_000; i++) store.refundOne('slots', slots, `s${i}`, 1, T0, T0 + 1)
    // Every key is fresh again: new keys reuse their entries, without counting an eviction.
    for (let i = 0; i < 1_000; i++) store.consumeOne('slots', slots, `n${i}`, 1, T0 + 2)
    expect(store.evictions).toBe(0)
    expect(store.size).toBeLessThanOrEqual(1_000)
  })

  it('stays within maxKeys while keys give their slots back, whatever the flood', () => {
    const store = memoryStore({ maxKeys: 100, seed: 5 })
    for (let i = 0; i < 50; i++) store.consumeOne('slots', slots, `held${i}`, 1, T0)
    for (let i = 0; i < 100_000; i++) {
      const now = T0 + 1 + i
      store.consumeOne('slots', slots, `n${i}`, 1, now)
      store.refundOne('slots', slots, `n${i}`, 1, now, now)
      store.consumeOne('slots', slots, `peek${i}`, 0, now)
    }
    expect(store.size).toBeLessThanOrEqual(100)
    for (let i = 0; i < 50; i++) {
      expect(store.consumeOne('slots', slots, `held${i}`, LIMIT, T0 + 200_000).allowed).toBe(false)
    }
  })
})
