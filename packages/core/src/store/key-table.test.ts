import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Algorithm } from '../algorithms/types.js'
import { ByteBudget } from './byte-budget.js'
import { createKeyHasher } from './fingerprint.js'
import { KeyTable } from './key-table.js'

/**
 * A stand-in algorithm whose state is [owner id, fresh-at time], so a test can tell whose state
 * a slot holds and decide when it counts as fresh.
 */
const probe: Algorithm = {
  name: 'fixed_window',
  limit: 1,
  policy: { quota: 1, windowMs: 1 },
  stateSize: 2,
  init(slots, offset) {
    slots[offset] = -1
    slots[offset + 1] = Number.MAX_SAFE_INTEGER
  },
  decide() {
    throw new Error('not used')
  },
  refund() {},
  freshAt: (slots, offset) => slots[offset + 1]!,
}

type Fingerprint = { first: number; second: number }

/**
 * 240 fingerprints crowded onto a few home slots: a third at the start of the table, a third at
 * its very end (so probe runs wrap around), a third spread out.
 */
const pool: Fingerprint[] = Array.from({ length: 240 }, (_, i) => {
  const spread = Math.floor((i * 2_654_435_761) % 2_147_483_647)
  const first = i % 3 === 0 ? i : i % 3 === 1 ? 2_147_483_646 - i : spread
  return { first, second: (i * 7919 + 13) % 2_147_483_647 }
})

function owner(table: KeyTable, key: Fingerprint): number | undefined {
  const slot = table.find(key.first, key.second)
  return slot < 0 ? undefined : table.data[table.offsetAt(slot)]
}

/** Adds `key` with state [id, freshAt]. */
function add(
  table: KeyTable,
  key: Fingerprint,
  id: number,
  freshAt = Number.MAX_SAFE_INTEGER,
): void {
  const offset = table.locate(key.first, key.second, 0)
  table.data[offset] = id
  table.data[offset + 1] = freshAt
}

describe('KeyTable', () => {
  it('finds every entry it holds, and only those, through inserts, growth and removals', () => {
    const operation = fc.record({ remove: fc.boolean(), key: fc.nat(pool.length - 1) })
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 400, size: 'max' }), (operations) => {
        const table = new KeyTable(probe, 10_000, new ByteBudget(2 ** 40), 0)
        const model = new Map<number, number>()
        operations.forEach(({ remove, key }, step) => {
          const fingerprint = pool[key]!
          if (remove) {
            const slot = table.find(fingerprint.first, fingerprint.second)
            expect(slot >= 0).toBe(model.has(key))
            if (slot >= 0) table.remove(slot)
            model.delete(key)
          } else if (model.has(key)) {
            const offset = table.locate(fingerprint.first, fingerprint.second, 0)
            expect(table.data[offset]).toBe(model.get(key))
          } else {
            add(table, fingerprint, step)
            model.set(key, step)
          }
          expect(table.count).toBe(model.size)
          const misplaced = pool.findIndex(
            (other, index) => owner(table, other) !== model.get(index),
          )
          expect(misplaced).toBe(-1)
        })
      }),
      { numRuns: 100 },
    )
  }, 60_000)

  it('when full, drops a fresh entry first and counts no eviction', () => {
    const table = new KeyTable(probe, 4, new ByteBudget(2 ** 40), 0)
    pool.slice(0, 4).forEach((key, id) => {
      add(table, key, id, id === 2 ? 0 : 1000)
    })
    add(table, pool[4]!, 4)
    expect(table.count).toBe(4)
    expect(table.evictions).toBe(0)
    expect(owner(table, pool[2]!)).toBeUndefined()
    for (const id of [0, 1, 3, 4]) expect(owner(table, pool[id]!)).toBe(id)
  })

  it('when full and nothing is fresh, gives used entries a second chance and evicts an unused one', () => {
    const table = new KeyTable(probe, 4, new ByteBudget(2 ** 40), 0)
    pool.slice(0, 4).forEach((key, id) => {
      add(table, key, id)
    })
    // Entries 0 and 1 are used again (referenced); 2 and 3 were seen once.
    for (const key of pool.slice(0, 2)) table.locate(key.first, key.second, 0)
    add(table, pool[4]!, 4)
    expect(table.evictions).toBe(1)
    expect(owner(table, pool[0]!)).toBe(0)
    expect(owner(table, pool[1]!)).toBe(1)
    expect(
      [owner(table, pool[2]!), owner(table, pool[3]!)].filter((id) => id === undefined),
    ).toHaveLength(1)
  })

  it('never holds more than maxKeys entries, nor grows beyond the room they need', () => {
    const table = new KeyTable(probe, 100, new ByteBudget(2 ** 40), 0)
    for (let i = 0; i < 5000; i++) {
      add(table, { first: (i * 2_654_435_761) % 2_147_483_647, second: i }, i)
      expect(table.count).toBeLessThanOrEqual(100)
    }
    expect(table.count).toBe(100)
    expect(table.evictions).toBe(4900)
    expect(table.slots).toBeLessThanOrEqual(Math.ceil((100 * 4) / 3) + 1)
  })

  it('marks a new key as used when it comes straight back (a burst), so a flood evicts others', () => {
    const hasher = createKeyHasher(7)
    for (let trial = 0; trial < 30; trial++) {
      const table = new KeyTable(probe, 4, new ByteBudget(2 ** 40), 0)
      table.locateKey(`burst-${trial}`, hasher, 0)
      table.locateKey(`burst-${trial}`, hasher, 0)
      for (const other of ['a', 'b', 'c', 'd']) table.locateKey(`${other}-${trial}`, hasher, 0)
      expect(table.evictions).toBe(1)
      hasher.hash(`burst-${trial}`)
      expect(table.find(hasher.first, hasher.second), `trial ${trial}`).toBeGreaterThanOrEqual(0)
    }
  })

  it('stays evenly loaded through a flood of new keys, so probes stay short', () => {
    const table = new KeyTable(probe, 4096, new ByteBudget(2 ** 40), 0)
    // Five tables' worth of one-off keys with well-spread fingerprints, none ever fresh.
    for (let i = 0; i < 5 * 4096; i++) {
      const first = Math.floor(((i * 0.6180339887) % 1) * 2_147_483_647)
      add(table, { first, second: i }, i)
    }
    expect(table.count).toBe(4096)
    expect(longestRun(table)).toBeLessThan(100)
  })
})

/** The most occupied slots in a row: what a lookup that misses may have to walk. */
function longestRun(table: KeyTable): number {
  let longest = 0
  let run = 0
  // Twice round, so a run that wraps past the end is counted whole.
  for (let i = 0; i < table.slots * 2; i++) {
    const occupied = table.words[(i % table.slots) * table.stride * 2] !== 0
    run = occupied ? run + 1 : 0
    longest = Math.max(longest, Math.min(run, table.slots))
  }
  return longest
}
