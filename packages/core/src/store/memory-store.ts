import { checkCost, checkTime } from '../algorithms/step.js'
import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { applyCharges } from './apply-charges.js'
import type { Charge, Outcome, Store } from './types.js'

export type MemoryStoreOptions = {
  /**
   * The most keys kept per rule. When a rule's table is full, a key whose state is back to fresh
   * is dropped first (nothing is lost), then the least recently used one.
   * @default 1_000_000
   */
  readonly maxKeys?: number
  /**
   * Fixes the secret that key fingerprints are drawn from. For tests only: anyone who knows the
   * seed can construct colliding keys. By default a fresh secret comes from
   * `crypto.getRandomValues` for every store.
   */
  readonly seed?: number
}

/** The embedded store: synchronous, bounded, compact. */
export type MemoryStore = Store & {
  consume(charges: readonly Charge[], now: number): Outcome
  refund(charges: readonly Charge[], chargedAt: number, now: number): void
  /** The single-rule hot path: no array, no promise. */
  consumeOne(rule: string, algorithm: Algorithm, key: string, cost: number, now: number): Decision
  /** Live entries over all rules. */
  readonly size: number
  /** Entries dropped to stay within `maxKeys` (fresh entries reclaimed are not counted). */
  readonly evictions: number
}

export const DEFAULT_MAX_KEYS = 1_000_000

/** A bounded in-memory store (provisional implementation; same API as the compact one). */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new RateLimitError('ERR_RL_INVALID_RULE', `maxKeys must be a whole number ≥ 1`, {
      field: 'maxKeys',
    })
  }
  const states = new Map<string, number[]>()

  function stateOf(rule: string, algorithm: Algorithm, key: string, now: number): number[] {
    const id = `${rule}\u0000${key}`
    let state = states.get(id)
    if (state === undefined) {
      state = new Array<number>(algorithm.stateSize).fill(0)
      algorithm.init(state, 0, now)
      states.set(id, state)
    }
    return state
  }

  return {
    get size() {
      return states.size
    },
    evictions: 0,
    consumeOne(rule, algorithm, key, cost, now) {
      checkTime(now)
      checkCost(cost)
      return algorithm.decide(stateOf(rule, algorithm, key, now), 0, cost, now, true)
    },
    consume(charges, now) {
      checkTime(now)
      for (const charge of charges) checkCost(charge.cost)
      const slots = charges.map((c) => stateOf(c.rule, c.algorithm, c.key, now))
      return {
        decisions: applyCharges(
          charges,
          slots,
          slots.map(() => 0),
          now,
        ),
        at: now,
      }
    },
    refund(charges, chargedAt, now) {
      checkTime(now)
      checkTime(chargedAt)
      for (const c of charges) {
        checkCost(c.cost)
        c.algorithm.refund(stateOf(c.rule, c.algorithm, c.key, now), 0, c.cost, chargedAt, now)
      }
    },
  }
}
