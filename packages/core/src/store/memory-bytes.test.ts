import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  fixedWindow,
  gcra,
  leakyBucket,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '../algorithms/index.js'
import type { Algorithm } from '../algorithms/types.js'
import { ByteBudget } from './byte-budget.js'
import { createKeyHasher } from './fingerprint.js'
import { KeyTable } from './key-table.js'
import { logWithRoom } from './log-room.js'
import { memoryStore } from './memory-store.js'
import type { Charge } from './types.js'

const MIB = 1024 * 1024
const T0 = 1_700_000_000_000

/** Every kind of state, sliding logs up to the largest limit a rule may have. */
const EVERY_KIND: readonly Algorithm[] = [
  tokenBucket({ rate: 10, burst: 20 }),
  gcra({ rate: 10, burst: 20 }),
  leakyBucket({ rate: 10, burst: 20 }),
  fixedWindow({ limit: 20, windowMs: 60_000 }),
  slidingWindow({ limit: 20, windowMs: 60_000 }),
  slidingLog({ limit: 5, windowMs: 60_000 }),
  slidingLog({ limit: 10_000, windowMs: 60_000 }),
  slidingLog({ limit: 100_000, windowMs: 60_000 }),
]

describe('the memory store’s byte bound', () => {
  it('holds a flood of distinct keys within maxBytes for every kind of state, and fills it', () => {
    for (const algorithm of EVERY_KIND) {
      const store = memoryStore({ maxBytes: MIB })
      for (let i = 0; i < 60_000; i++) {
        const cost = i % 7 === 0 ? Math.min(algorithm.limit, 40) : 1
        store.consumeOne('flood', algorithm, `ip:${i}`, cost, T0 + i)
        if (i % 997 === 0) expect(store.bytes, algorithm.name).toBeLessThanOrEqual(MIB)
      }
      expect(store.bytes, algorithm.name).toBeLessThanOrEqual(MIB)
      expect(store.bytes, algorithm.name).toBeGreaterThan(MIB / 2)
      expect(store.size, algorithm.name).toBeLessThan(60_000)
    }
  }, 60_000)

  it('charges a sliding log for the entries it holds, not for its limit', () => {
    const store = memoryStore()
    const log = slidingLog({ limit: 100_000, windowMs: 60_000 })
    for (let i = 0; i < 2_000; i++) {
      for (let n = 0; n < 3; n++) store.consumeOne('log', log, `ip:${i}`, 1, T0 + n)
    }
    // A slot and a block with room for four entries, with the slack of growing arrays: under
    // 128 bytes a key (the whole log would be 800 kB a key, 1.6 GB for these 2,000).
    expect(store.bytes / 2_000).toBeLessThan(128)
    // The log still counts exactly: 3 of 100,000 taken.
    expect(store.consumeOne('log', log, 'ip:7', 0, T0 + 3).remaining).toBe(99_997)
  })

  it('keeps its own accounting equal to the arrays it holds and within the bound, on any traffic', () => {
    const ruleArb = fc.constantFrom(...EVERY_KIND)
    const request = fc.record({
      rule: fc.nat(3),
      key: fc.nat(3_000),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 3_000 })),
      dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 90_000 })),
    })
    fc.assert(
      fc.property(
        fc.array(ruleArb, { minLength: 4, maxLength: 4 }),
        fc.array(request, { minLength: 1, maxLength: 400 }),
        (algorithms, requests) => {
          const budget = new ByteBudget(MIB)
          const tables = algorithms.map((a) => new KeyTable(a, 16_777_215, budget, T0))
          const hasher = createKeyHasher(1)
          let now = T0
          for (const { rule, key, cost, dt } of requests) {
            now += dt
            const table = tables[rule]!
            const algorithm = table.algorithm
            const charged = Math.min(cost, algorithm.limit)
            const offset = table.locateKey(`k${key}`, hasher, now)
            if (table.logs === undefined) algorithm.decide(table.data, offset, charged, now, true)
            else {
              const log = logWithRoom(table, offset, charged, now)
              if (log >= 0) algorithm.decide(table.logs.data, log, charged, now, true)
            }
            const held = tables.reduce((sum, t) => sum + t.bytes, 0)
            expect(budget.used).toBe(held)
            expect(held).toBeLessThanOrEqual(MIB)
          }
        },
      ),
      { numRuns: 60 },
    )
  })

  it('gives a rule that comes late an equal share of a bound another rule has filled', () => {
    const budget = new ByteBudget(MIB)
    const hasher = createKeyHasher(2)
    const first = new KeyTable(EVERY_KIND[0]!, 16_777_215, budget, T0)
    for (let i = 0; i < 100_000; i++) first.locateKey(`a${i}`, hasher, T0)
    expect(first.bytes).toBeGreaterThan(MIB * 0.9)
    const late = new KeyTable(EVERY_KIND[7]!, 16_777_215, budget, T0)
    for (let i = 0; i < 100_000; i++) {
      const offset = late.locateKey(`b${i}`, hasher, T0)
      logWithRoom(late, offset, 1 + (i % 3), T0)
    }
    expect(budget.used).toBeLessThanOrEqual(MIB)
    for (const table of [first, late]) expect(table.bytes).toBeGreaterThan(MIB * 0.35)
  })

  it('refuses a maxBytes below 1 MiB or not a whole number', () => {
    for (const maxBytes of [0, MIB - 1, 1.5 * MIB + 0.5, Number.NaN]) {
      expect(() => memoryStore({ maxBytes })).toThrow(
        expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'maxBytes' }),
      )
    }
  })

  it('decides requests with several charges on logs within the bound', () => {
    const store = memoryStore({ maxBytes: MIB })
    const log = EVERY_KIND[7]!
    const charges = (i: number | string): Charge[] => [
      { rule: 'log', algorithm: log, key: `ip:${i}`, cost: 2, shadow: false },
      { rule: 'bucket', algorithm: EVERY_KIND[0]!, key: `ip:${i}`, cost: 1, shadow: false },
      { rule: 'log', algorithm: log, key: `ip:${i}`, cost: 1, shadow: false },
    ]
    for (let i = 0; i < 30_000; i++) {
      const { decisions } = store.consume(charges(i % 20_000), T0 + i)
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true])
      if (i % 1_000 === 0) expect(store.bytes).toBeLessThanOrEqual(MIB)
    }
    // Both charges on the log share one state: two requests leave 6 entries.
    store.consume(charges('last'), T0 + 30_000)
    store.consume(charges('last'), T0 + 30_001)
    expect(store.consumeOne('log', log, 'ip:last', 0, T0 + 30_002).remaining).toBe(99_994)
  }, 60_000)

  it('keeps a token or leaky bucket and a fixed window in 16-byte slots, as GCRA, unless a count needs more than 21 bits', () => {
    // 100 keys: a table of 256 slots.
    const bytesFor = (algorithm: Algorithm) => {
      const store = memoryStore()
      for (let i = 0; i < 100; i++) store.consumeOne('r', algorithm, `ip:${i}`, 1, T0)
      return store.bytes
    }
    expect(bytesFor(tokenBucket({ rate: 100, periodMs: 60_000, burst: 100 }))).toBe(256 * 16)
    expect(bytesFor(gcra({ rate: 100, periodMs: 60_000, burst: 100 }))).toBe(256 * 16)
    expect(bytesFor(leakyBucket({ rate: 100, periodMs: 60_000, burst: 100 }))).toBe(256 * 16)
    expect(bytesFor(fixedWindow({ limit: 100, windowMs: 60_000 }))).toBe(256 * 16)
    expect(bytesFor(fixedWindow({ limit: 10, calendar: 'day', timeZone: 'Asia/Tokyo' }))).toBe(
      256 * 16,
    )
    expect(bytesFor(fixedWindow({ limit: 2 ** 21, windowMs: 60_000 }))).toBe(256 * 24)
    // 100 per hour, a burst of 1,000: 36 M units, two doubles.
    expect(bytesFor(tokenBucket({ rate: 100, periodMs: 3_600_000, burst: 1_000 }))).toBe(256 * 24)
  })

  it.each([
    ['a token bucket', () => tokenBucket({ rate: 10, burst: 3 })],
    ['a leaky bucket', () => leakyBucket({ rate: 10, burst: 3 })],
    ['a fixed window', () => fixedWindow({ limit: 3, windowMs: 300 })],
    ['a calendar window', () => fixedWindow({ limit: 3, calendar: 'day', timeZone: 'Asia/Tokyo' })],
  ])('decides %s in 16-byte slots, alone and beside other rules, as in doubles', (_kind, make) => {
    // The same rule without its packed form keeps two doubles a key; deciding on the words (one
    // charge) or unpacking them into the scratch buffer (several), the store must answer alike.
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.integer({ min: 0, max: 5 }),
            gap: fc.oneof(
              fc.integer({ min: 0, max: 400 }),
              fc.integer({ min: -5_000, max: 5_000 }),
              fc.integer({ min: -172_800_000, max: 172_800_000 }),
            ),
            cost: fc.integer({ min: 0, max: 3 }),
            both: fc.boolean(),
            refund: fc.boolean(),
          }),
          { minLength: 1, maxLength: 120 },
        ),
        (ops) => {
          const bucket = make()
          const window = fixedWindow({ limit: 4, windowMs: 1_000 })
          expect(bucket.packed).toBeDefined()
          const unpacked: Algorithm = { ...bucket, packed: undefined }
          const packed = memoryStore({ seed: 7 })
          const plain = memoryStore({ seed: 7 })
          let now = T0
          for (const { key, gap, cost, both, refund } of ops) {
            now = Math.max(0, now + gap)
            const charges: Charge[] = [
              { rule: 'b', algorithm: bucket, key: `k${key}`, cost, shadow: false },
            ]
            const plainCharges: Charge[] = [{ ...charges[0]!, algorithm: unpacked }]
            if (both) {
              const windowCharge = {
                rule: 'w',
                algorithm: window,
                key: `k${key}`,
                cost: 1,
                shadow: false,
              }
              charges.push(windowCharge)
              plainCharges.push(windowCharge)
            }
            if (refund) {
              packed.refund(charges, now, now)
              plain.refund(plainCharges, now, now)
              continue
            }
            const expected = plain.consume(plainCharges, now)
            if (!both) {
              expect(packed.consumeOne('b', bucket, `k${key}`, cost, now)).toEqual(
                expected.decisions[0],
              )
            } else expect(packed.consume(charges, now).decisions).toEqual(expected.decisions)
          }
        },
      ),
      { numRuns: 200 },
    )
  })
})
