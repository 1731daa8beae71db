// As it was before its code was shortened, for old-store-differential.test.ts.
import { checkCost, wholeTime } from '../../algorithms/step.js'
import type { Algorithm } from '../../algorithms/types.js'
import type { Decision } from '../../decision.js'
import { refuseUnknownOptions } from '../../options/unknown-options.js'
import { applyCharges } from '../apply-charges.js'
import { checkMaxKeys } from '../max-keys.js'
import type { Charge, Store } from '../types.js'

/** Options of `mapStore`: how many keys it holds. */
export type MapStoreOptions = {
  /**
   * The most keys held over all rules; beyond it the least recently used are dropped (never one
   * holding concurrency slots, which may take the store past it). A state
   * takes one array of its algorithm's numbers (a sliding log's: its limit), so bound the bytes
   * with this. @default 10_000
   */
  readonly maxKeys?: number
}

/** A `Store` with the synchronous single-charge path the limiter uses when a store has one. */
export type MapStore = Store & {
  /**
   * Charges `cost` to `key` under `rule` at `now`: the single-rule path, with no array and no
   * promise. Same decision as `consume` with one charge.
   */
  consumeOne(rule: string, algorithm: Algorithm, key: string, cost: number, now: number): Decision
  /** Keys held now. */
  readonly size: number
  /** Keys dropped while still counting, to stay within `maxKeys` (fresh ones are not counted). */
  readonly evictions: number
}

type Entry = { readonly algorithm: Algorithm; readonly state: number[] }

const DEFAULT_MAX_KEYS = 10_000

/**
 * A small in-memory store for isolates that hold few keys (a Worker's): a `Map` of plain arrays
 * bounded by key count, least recently used dropped first. It decides exactly as `memoryStore`
 * while neither drops a key; it is the lean entries' default because it bundles in a tenth of
 * the bytes. `memoryStore` stays the one for processes holding millions of keys in a byte
 * budget.
 * @example
 * const store = mapStore({ maxKeys: 5_000 })
 */
export function mapStore(options: MapStoreOptions = {}): MapStore {
  refuseUnknownOptions(options, ['maxKeys'], 'mapStore()')
  const maxKeys = options.maxKeys === undefined ? DEFAULT_MAX_KEYS : checkMaxKeys(options.maxKeys)
  // Insertion order is use order: a key used is moved to the end, the first is dropped first.
  const states = new Map<string, Entry>()
  let evictions = 0

  /** The state of `key` under `rule` for `algorithm`, created full at `now` when not held. */
  function stateOf(rule: string, algorithm: Algorithm, key: string, now: number): number[] {
    const id = idOf(rule, algorithm, key)
    let entry = states.get(id)
    if (entry === undefined) {
      entry = { algorithm, state: new Array<number>(algorithm.stateSize).fill(0) }
      algorithm.init(entry.state, 0, now)
    } else states.delete(id)
    states.set(id, entry)
    return entry.state
  }

  /**
   * Drops the least recently used keys beyond `maxKeys`, once a call no longer holds them. A key
   * holding concurrency slots stays: dropping it would hand them out again, and such keys are as
   * many as the requests in flight.
   */
  function trim(now: number): void {
    if (states.size <= maxKeys) return
    for (const [id, entry] of states) {
      const live = entry.algorithm.freshAt(entry.state, 0) > now
      if (live && entry.algorithm.heldUntilReleased === true) continue
      if (live) evictions++
      states.delete(id)
      if (states.size <= maxKeys) return
    }
  }

  return {
    get size() {
      return states.size
    },
    get evictions() {
      return evictions
    },
    consumeOne(rule, algorithm, key, cost, now) {
      now = wholeTime(now)
      checkCost(cost, algorithm.limit)
      const decision = algorithm.decide(stateOf(rule, algorithm, key, now), 0, cost, now, true)
      trim(now)
      return decision
    },
    consume(charges, now) {
      now = wholeTime(now)
      // Every charge is checked before any state is created or written. A rule id charged with
      // two algorithms in one request is not refused: its states are kept apart by algorithm
      // (`idOf`), as consumeOne keeps them.
      for (const charge of charges) checkCost(charge.cost, charge.algorithm.limit)
      const slots = charges.map((c) => stateOf(c.rule, c.algorithm, c.key, now))
      const decisions = applyCharges(
        charges,
        slots,
        slots.map(() => 0),
        now,
      )
      trim(now)
      return { decisions, at: now }
    },
    refund(charges: readonly Charge[], chargedAt, now) {
      now = wholeTime(now)
      chargedAt = wholeTime(chargedAt)
      for (const charge of charges) checkCost(charge.cost)
      for (const { rule, algorithm, key, cost } of charges) {
        // A key that is not held is fresh (or was dropped): there is nothing to give back.
        const entry = states.get(idOf(rule, algorithm, key))
        if (entry !== undefined) algorithm.refund(entry.state, 0, cost, chargedAt, now)
      }
    },
  }
}

/**
 * A key's place: its rule, what its algorithm counts (algorithms built from the same parameters
 * share states, as in `memoryStore`) and the key. A rule id arriving with another algorithm (two
 * limiters sharing this store) so never reads the other's states.
 */
function idOf(rule: string, algorithm: Algorithm, key: string): string {
  const { quota, windowMs } = algorithm.policy
  return `${rule}\u0000${algorithm.name}/${algorithm.limit}/${quota}/${windowMs}/${algorithm.stateSize}\u0000${key}`
}
