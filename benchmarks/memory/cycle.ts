/**
 * Bytes per key over a table's growth cycle: the store's own count of its arrays (`store.bytes`)
 * divided by the keys it holds, as distinct keys arrive one at a time, for each kind of rule.
 * A table grows by a quarter once large, so between two growths its bytes per key fall from
 * their highest (just after a growth, the table 60 % full) to their lowest (just before the
 * next, 75 % full); this reports both ends of the cycle that holds `keys` keys, and the figure at
 * `keys` itself. Deterministic: no timing, no garbage collector.
 *
 *   node --conditions=@tollgate/source --import tsx memory/cycle.ts [keys]
 *
 * (run.ts runs it and adds the table to its section). Prints one line per rule on stderr and
 * the results as JSON on stdout.
 */
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  memoryStore,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { ipKey } from './keys.js'

const CYCLE_RULES: Record<string, () => Algorithm> = {
  token_bucket: () => tokenBucket({ rate: 100, periodMs: 60_000, burst: 100 }),
  gcra: () => gcra({ rate: 100, periodMs: 60_000, burst: 100 }),
  leaky_bucket: () => leakyBucket({ rate: 100, periodMs: 60_000, burst: 100 }),
  fixed_window: () => fixedWindow({ limit: 100, windowMs: 60_000 }),
  sliding_window: () => slidingWindow({ limit: 100, windowMs: 60_000 }),
}

export type Cycle = {
  rule: string
  keys: number
  /** Bytes per key at `keys`. */
  atKeys: number
  /** The growth cycle around `keys`: its first and last key counts, highest and lowest B/key. */
  from: number
  to: number
  highest: number
  lowest: number
}

function measureCycle(rule: string, keys: number): Cycle {
  const algorithm = CYCLE_RULES[rule]!()
  // Room for the keys and the one-off copy a growth makes, so the bound never evicts.
  const store = memoryStore({ maxBytes: 2 ** 31, seed: 1 })
  const now = 1_700_000_000_000
  let bytes = 0
  /** Key counts at which the table grew (the count after the insert that grew it). */
  const growths: number[] = []
  let atKeys = 0
  let count = 0
  const perKey = () => store.bytes / store.size
  for (;;) {
    store.consumeOne('cycle', algorithm, ipKey(count), 1, now)
    count++
    if (store.bytes !== bytes) {
      bytes = store.bytes
      growths.push(count)
      if (count > keys) break
    }
    if (count === keys) atKeys = perKey()
  }
  // The cycle holding `keys`: from the last growth at or before it to the next.
  const to = growths.at(-1)! - 1
  const from = growths.at(-2)!
  const store2 = memoryStore({ maxBytes: 2 ** 31, seed: 1 })
  let highest = 0
  let lowest = Number.POSITIVE_INFINITY
  for (let i = 0; i < to; i++) {
    store2.consumeOne('cycle', algorithm, ipKey(i), 1, now)
    if (i + 1 >= from) {
      const b = store2.bytes / store2.size
      if (b > highest) highest = b
      if (b < lowest) lowest = b
    }
  }
  return { rule, keys, atKeys, from, to, highest, lowest }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const keys = Number(process.argv[2] ?? 2_040_000)
  const cycles = Object.keys(CYCLE_RULES).map((rule) => {
    const c = measureCycle(rule, keys)
    process.stderr.write(
      `${rule}: ${c.atKeys.toFixed(1)} B/key at ${keys}; cycle ${c.from}–${c.to} keys: ${c.highest.toFixed(1)}–${c.lowest.toFixed(1)} B/key\n`,
    )
    return c
  })
  process.stdout.write(`${JSON.stringify(cycles)}\n`)
}
