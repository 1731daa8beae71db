import { MAX_TIME_MS } from '../algorithms/integer.js'
import { costTooHigh } from '../algorithms/params.js'
import { checkCost, checkTime, wholeMs } from '../algorithms/step.js'
import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { applyCharges } from './apply-charges.js'
import { createKeyHasher } from './fingerprint.js'
import { KeyTable, MAX_TABLE_KEYS } from './key-table.js'
import type { Charge, Outcome, Store } from './types.js'

export type MemoryStoreOptions = {
  /**
   * The most keys kept per rule, 1 to 16,777,215. A full table first drops a key whose state is
   * back to fresh (nothing is lost), and only then the least recently used key (CLOCK), which
   * starts again with a full allowance if it returns. A token-bucket key takes 32–40 bytes, and
   * a rule's table at most `maxKeys × 4/3` slots of 24 bytes: about 32 MB at the default. Lower
   * it on edge runtimes with small memory limits; raise it when more clients than that are
   * active within one refill period, or they start evicting each other.
   * @default 1_000_000, or fewer for a rule whose state is large (a sliding log keeps one number
   * per unit of its limit): as many as fit in 64 MiB, and at least 1,024
   */
  readonly maxKeys?: number
  /**
   * Fixes the secret that key fingerprints are computed with. For tests only: anyone who knows
   * it can construct keys that share a state. By default every store draws its own secret from
   * `crypto.getRandomValues`.
   */
  readonly seed?: number
}

/**
 * The embedded store: decides synchronously, keeps no key strings, and holds at most `maxKeys`
 * keys per rule without any timer.
 *
 * Keys are kept as keyed 62-bit fingerprints (two multilinear hashes modulo 2^31 − 1 with secret
 * coefficients drawn per store from `crypto.getRandomValues` and never exposed). Two keys that
 * collide share one state; for any two keys chosen without the secret that happens with
 * probability 2^-62, so at n keys in a rule about n²/2^63 colliding pairs are expected (4.5e-7
 * at 2.04 M keys), and no choice of keys makes it likelier. See docs/concepts/stores.md.
 */
export interface MemoryStore extends Store {
  consume(charges: readonly Charge[], now: number): Outcome
  refund(charges: readonly Charge[], chargedAt: number, now: number): void
  /**
   * Charges `cost` to `key` under `rule` at `now` (whole ms): the single-rule hot path, with no
   * array and no promise. Same decision as `consume` with one charge.
   */
  consumeOne(rule: string, algorithm: Algorithm, key: string, cost: number, now: number): Decision
  /** Keys held over all rules, including idle ones not yet reclaimed. */
  readonly size: number
  /** Keys dropped while still counting, to stay within `maxKeys` (fresh ones are not counted). */
  readonly evictions: number
}

const DEFAULT_MAX_KEYS = 1_000_000

/**
 * A bounded, compact in-memory store.
 * @example
 * const store = memoryStore({ maxKeys: 100_000 })
 * const decision = store.consumeOne('per-ip', tokenBucket({ rate: 10, burst: 20 }), 'ip:203.0.113.7', 1, Date.now())
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxKeys = options.maxKeys === undefined ? undefined : checkMaxKeys(options.maxKeys)
  const hasher = createKeyHasher(options.seed)
  /** Each rule's tables, the one used last first: one per algorithm the rule id arrives with. */
  const tables = new Map<string, KeyTable[]>()
  /** The rule, algorithm and table of the last call: a run of calls for one rule skips the map. */
  let lastRule: string | undefined
  let lastAlgorithm: Algorithm | undefined
  let lastTable: KeyTable | undefined
  /** Evictions of tables dropped for newer algorithms under their rule id. */
  let retiredEvictions = 0
  let scratch = new Float64Array(16)

  /**
   * The table of `rule` for `algorithm`. A rule id arriving with another algorithm (a changed
   * rule, or two limiters sharing this store with different rules of one name) gets a table of
   * its own rather than replacing the other's: two live limiters would otherwise reset each
   * other's keys on every alternation and neither would limit anything. The last few are kept.
   */
  function tableFor(rule: string, algorithm: Algorithm): KeyTable {
    let table = rule === lastRule && lastTable!.algorithm === algorithm ? lastTable : undefined
    if (table === undefined) {
      let list = tables.get(rule)
      if (list === undefined) {
        list = []
        tables.set(rule, list)
      }
      table = takeTable(list, algorithm)
      if (table === undefined) {
        table = new KeyTable(algorithm, maxKeys ?? defaultMaxKeys(algorithm))
        list.unshift(table)
        if (list.length > TABLES_PER_RULE) retiredEvictions += list.pop()!.evictions
      }
    }
    lastRule = rule
    lastAlgorithm = algorithm
    lastTable = table
    return table
  }

  function consumeMany(charges: readonly Charge[], now: number): Decision[] {
    checkOneAlgorithmPerRule(charges)
    const count = charges.length
    const owned = charges.map((charge) => tableFor(charge.rule, charge.algorithm))
    const firsts: number[] = []
    const seconds: number[] = []
    const owners: number[] = []
    const offsets: number[] = []
    let size = 0
    for (let i = 0; i < count; i++) {
      hasher.hash(charges[i]!.key)
      firsts.push(hasher.first)
      seconds.push(hasher.second)
      // The same key under the same rule twice in one request shares one state, as it would in
      // a store that keeps the strings.
      let owner = i
      for (let j = 0; j < i && owner === i; j++) {
        if (owned[j] === owned[i] && firsts[j] === hasher.first && seconds[j] === hasher.second) {
          owner = j
        }
      }
      owners.push(owner)
      offsets.push(owner === i ? size : offsets[owner]!)
      if (owner === i) size += charges[i]!.algorithm.stateSize
    }
    if (scratch.length < size) scratch = new Float64Array(size * 2)
    for (let i = 0; i < count; i++) {
      if (owners[i] !== i) continue
      const table = owned[i]!
      const slot = table.find(firsts[i]!, seconds[i]!)
      const at = offsets[i]!
      if (slot < 0) charges[i]!.algorithm.init(scratch, at, now)
      else {
        const from = table.offsetAt(slot)
        scratch.set(table.data.subarray(from, from + table.stride - 1), at)
      }
    }
    const decisions = applyCharges(charges, new Array(count).fill(scratch), offsets, now)
    for (let i = 0; i < count; i++) {
      if (owners[i] !== i) continue
      const table = owned[i]!
      const to = table.locate(firsts[i]!, seconds[i]!, now)
      const at = offsets[i]!
      table.data.set(scratch.subarray(at, at + table.stride - 1), to)
    }
    return decisions
  }

  return {
    get size() {
      let size = 0
      for (const list of tables.values()) for (const table of list) size += table.count
      return size
    },
    get evictions() {
      let evictions = retiredEvictions
      for (const list of tables.values()) for (const table of list) evictions += table.evictions
      return evictions
    },
    consumeOne(rule, algorithm, key, cost, now) {
      if (!Number.isSafeInteger(now)) now = wholeMs(now)
      // The checks of checkTime and checkCost, inline; those throw the errors when one fails.
      // Everything rare (errors, a new rule) stays out of line, so the JIT inlines the decision.
      if (!isValidCharge(now, cost, algorithm.limit)) refuse(now, cost, algorithm.limit)
      const table =
        algorithm === lastAlgorithm && rule === lastRule ? lastTable! : tableFor(rule, algorithm)
      const offset = table.locateKey(key, hasher, now)
      return algorithm.decide(table.data, offset, cost, now, true)
    },
    consume(charges, now) {
      now = wholeMs(now)
      checkTime(now)
      // Every charge is checked before any state is created or written.
      for (const charge of charges) {
        checkCost(charge.cost)
        if (charge.cost > charge.algorithm.limit) {
          throw costTooHigh(charge.cost, charge.algorithm.limit)
        }
      }
      if (charges.length !== 1) return { decisions: consumeMany(charges, now), at: now }
      // One charge: deciding with commit is exactly what applyCharges does for it.
      const { rule, algorithm, key, cost } = charges[0]!
      const table = tableFor(rule, algorithm)
      const offset = table.locateKey(key, hasher, now)
      return { decisions: [algorithm.decide(table.data, offset, cost, now, true)], at: now }
    },
    refund(charges, chargedAt, now) {
      now = wholeMs(now)
      chargedAt = wholeMs(chargedAt)
      checkTime(now)
      checkTime(chargedAt)
      for (const charge of charges) checkCost(charge.cost)
      for (const { rule, algorithm, key, cost } of charges) {
        const table = tables.get(rule)?.find((t) => sameRule(t.algorithm, algorithm))
        // A key that is not held is fresh (or was evicted): there is nothing to give back.
        if (table === undefined) continue
        hasher.hash(key)
        const slot = table.find(hasher.first, hasher.second)
        if (slot >= 0) algorithm.refund(table.data, table.offsetAt(slot), cost, chargedAt, now)
      }
    },
  }
}

/** Tables kept per rule id: one per algorithm it arrived with, the most recently used. */
const TABLES_PER_RULE = 4

/**
 * The table in `list` for `algorithm` (the same rule rebuilt from the same parameters counts),
 * moved to the front; undefined when there is none.
 */
function takeTable(list: KeyTable[], algorithm: Algorithm): KeyTable | undefined {
  for (let i = 0; i < list.length; i++) {
    const table = list[i]!
    if (table.algorithm !== algorithm && !sameRule(table.algorithm, algorithm)) continue
    table.algorithm = algorithm
    if (i > 0) {
      list.splice(i, 1)
      list.unshift(table)
    }
    return table
  }
  return undefined
}

function isValidCharge(now: number, cost: number, limit: number): boolean {
  return (
    Number.isSafeInteger(now) &&
    now >= 0 &&
    now <= MAX_TIME_MS &&
    Number.isSafeInteger(cost) &&
    cost >= 0 &&
    cost <= limit
  )
}

/** Throws the error for an invalid time or cost, or a cost above the rule's capacity. */
function refuse(now: number, cost: number, limit: number): never {
  checkTime(now)
  checkCost(cost)
  throw costTooHigh(cost, limit)
}

/** Two algorithm objects built from the same parameters read each other's states. */
function sameRule(a: Algorithm, b: Algorithm): boolean {
  return (
    a.name === b.name &&
    a.limit === b.limit &&
    a.stateSize === b.stateSize &&
    a.policy.quota === b.policy.quota &&
    a.policy.windowMs === b.policy.windowMs
  )
}

function checkOneAlgorithmPerRule(charges: readonly Charge[]): void {
  for (let i = 0; i < charges.length; i++) {
    for (let j = 0; j < i; j++) {
      const [a, b] = [charges[i]!, charges[j]!]
      if (a.rule === b.rule && !sameRule(a.algorithm, b.algorithm)) {
        throw new RateLimitError(
          'ERR_RL_INVALID_RULE',
          `rule ${a.rule} is charged with two different algorithms in one request`,
          { rule: a.rule, field: 'algorithm' },
        )
      }
    }
  }
}

/** What the default bounds a rule's table to: a token-bucket rule's 1 M keys take 32 MB. */
const DEFAULT_TABLE_BYTES = 64 * 1024 * 1024
const MIN_DEFAULT_MAX_KEYS = 1024

/**
 * `DEFAULT_MAX_KEYS`, or as many keys as fit in `DEFAULT_TABLE_BYTES` when each is large: a
 * sliding log with a limit of 1,000 keeps 8 KB per key, and a million of them (a flood of new
 * clients) would take 10 GB. A rule's keys beyond that are evicted, oldest unused first.
 */
export function defaultMaxKeys(algorithm: Algorithm): number {
  const slotBytes = (1 + algorithm.stateSize) * 8
  const fitting = Math.floor((DEFAULT_TABLE_BYTES * 3) / (4 * slotBytes))
  return Math.min(DEFAULT_MAX_KEYS, Math.max(MIN_DEFAULT_MAX_KEYS, fitting))
}

function checkMaxKeys(maxKeys: number): number {
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_TABLE_KEYS) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `maxKeys must be a whole number from 1 to ${MAX_TABLE_KEYS}, got ${maxKeys}`,
      { field: 'maxKeys' },
    )
  }
  return maxKeys
}
