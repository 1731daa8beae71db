import { MAX_TIME_MS } from '../algorithms/integer.js'
import { costTooHigh } from '../algorithms/params.js'
import { checkCost, checkTime, wholeMs, wholeTime } from '../algorithms/step.js'
import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { invalidOption, shown } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { ByteBudget } from './byte-budget.js'
import { forgetInherited, inheritsKey } from './carry-over.js'
import { FIGURE_TABLES_PER_RULE, type Kin, tableHolding } from './figure-tables.js'
import { createKeyHasher } from './fingerprint.js'
import { KeyTable } from './key-table.js'
import { NO_LOG } from './log-arena.js'
import { logWithRoom } from './log-room.js'
import { checkMaxKeys, MAX_KEYS } from './max-keys.js'
import { consumeMany, decideLogged, type Scratch } from './memory-charges.js'
import { memoryPenalties } from './memory-penalties.js'
import { createPenaltyBook, type PenaltyBook } from './penalty-book.js'
import { checkOneAlgorithmPerRule, sameRule, TABLES_PER_RULE, takeTable } from './rule-tables.js'
import type {
  Charge,
  FiguresCarry,
  KeyRef,
  KeyStatus,
  Outcome,
  PenalisedOutcome,
  Penalty,
  RuleChange,
  Settlement,
  Store,
} from './types.js'

/** Options of `memoryStore`: its budget, in bytes or keys, and the seed of its key hash. */
export type MemoryStoreOptions = {
  /**
   * The most bytes the store's state takes, over all rules: 1 MiB (1,048,576) or more. A rule
   * that needs more room than is left takes it from the largest rule while that one keeps at
   * least as much, so rules flooded together share the bound equally. A rule that can get no
   * more first drops a key whose state is back to fresh (nothing is lost), and only then its
   * least recently used key (CLOCK), which starts again with a full allowance if it returns.
   * A token-bucket, GCRA, leaky-bucket or fixed-window key takes 21–27 bytes (about 3 M keys
   * fit in the default; 32–40 for a rule whose capacity or limit needs more than 21 bits), a
   * sliding-log key about 70 bytes with one entry and 8–16 per further entry, whatever its limit. Lower it on
   * edge runtimes with small memory limits; raise it when more clients than fit are active
   * within one refill period, or they start evicting each other. A key holding concurrency
   * slots is never evicted: when every key of a concurrency rule holds slots, its table grows past
   * this bound and `maxKeys` rather than hand a slot out twice (such keys are as many as the
   * requests in flight).
   * @default 67_108_864 (64 MiB)
   */
  readonly maxBytes?: number
  /**
   * The most keys kept per rule, 1 to 16,777,215, within `maxBytes`.
   * @default 16_777_215
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
  settle(settlements: readonly Settlement[], chargedAt: number, now: number): void
  consumePenalised(charges: readonly Charge[], now: number): PenalisedOutcome
  peek(ref: KeyRef, penalty: Penalty | undefined, now: number): KeyStatus
  reset(ref: KeyRef, now: number): void
  block(ref: KeyRef, penalty: Penalty, until: number, now: number): void
  unblock(ref: KeyRef, now: number): void
  /**
   * Charges `cost` to `key` under `rule` at `now` (whole ms): the single-rule hot path, with no
   * array and no promise. Same decision as `consume` with one charge.
   */
  consumeOne(rule: string, algorithm: Algorithm, key: string, cost: number, now: number): Decision
  /**
   * Gives `cost` back to `key` under `rule`, as `refund` with one charge does: the single-rule
   * path a concurrency slot takes when its response ends, with no array.
   */
  refundOne(
    rule: string,
    algorithm: Algorithm,
    key: string,
    cost: number,
    chargedAt: number,
    now: number,
  ): void
  /**
   * Drops every key, over all rules, whose state is back to fresh at `now` (whole ms): a full
   * bucket, a window that has ended. Nothing is lost: such a key starts again as it left. The
   * store reclaims these keys by itself when it needs room; a sweep frees them on a schedule of
   * the caller's; it also drops the offences of penalised rules once they are forgotten (not
   * counted). Returns how many keys were dropped.
   */
  sweep(now: number): number
  /**
   * When `key`'s state under `rule` is back to fresh (a fixed window: its end), or undefined when
   * the store holds no state for it.
   */
  heldUntil(rule: string, algorithm: Algorithm, key: string): number | undefined
  /** Drops `key`'s state under `rule`: its next charge finds a fresh one. */
  forget(rule: string, algorithm: Algorithm, key: string): void
  updateRules(changes: readonly RuleChange[], removed: readonly string[], now: number): void
  /**
   * Marks `rule` as charged under per-client figures: each set of figures gets a table of its
   * own, and a key charged under other figures than its state's carries that state (`carry`).
   */
  carryFigures(rule: string, carry: FiguresCarry): void
  /** Keys held over all rules, including idle ones not yet reclaimed. */
  readonly size: number
  /**
   * The bytes its state takes (the arrays of every rule's table), above `maxBytes` only while
   * concurrency slots in flight need more.
   */
  readonly bytes: number
  /** Keys dropped while still counting, to stay within `maxKeys` (fresh ones are not counted). */
  readonly evictions: number
}

// 64 MiB and 1 MiB, written out: a product would keep them in bundles that never build the store.
const DEFAULT_MAX_BYTES = 67_108_864
const MIN_MAX_BYTES = 1_048_576

/**
 * A bounded, compact in-memory store.
 * @example
 * const store = memoryStore({ maxKeys: 100_000 })
 * const decision = store.consumeOne('per-ip', tokenBucket({ rate: 10, burst: 20 }), 'ip:203.0.113.7', 1, Date.now())
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  refuseUnknownOptions(options, ['maxBytes', 'maxKeys', 'seed'], 'memoryStore()')
  const maxKeys = options.maxKeys === undefined ? MAX_KEYS : checkMaxKeys(options.maxKeys)
  const budget = new ByteBudget(
    options.maxBytes === undefined ? DEFAULT_MAX_BYTES : checkMaxBytes(options.maxBytes),
  )
  const hasher = createKeyHasher(options.seed)
  /** Each rule's tables, the one used last first: one per algorithm the rule id arrives with. */
  const tables = new Map<string, KeyTable[]>()
  /** Rules with per-client figures (`carryFigures`), and the link each of their tables holds. */
  const figureCarries = new Map<string, FiguresCarry>()
  const kins = new Map<string, Kin>()
  /** Where `holding` found a key of a rule with per-client figures. */
  const found = { slot: -1 }
  /** The rule, algorithm and table of the last call: a run of calls for one rule skips the map. */
  let lastRule: string | undefined
  let lastAlgorithm: Algorithm | undefined
  let lastTable: KeyTable | undefined
  /** Evictions of tables dropped for newer algorithms under their rule id. */
  let retiredEvictions = 0
  /** The slot of the key `holding` found last. */
  let heldAt = -1
  const scratch: Scratch = { buffer: new Float64Array(16) }
  /** Offences of penalised rules, made on first use (see penalty-book.ts). */
  let penalties: PenaltyBook | undefined
  const book = () =>
    (penalties ??= createPenaltyBook(hasher, Math.min(maxKeys, Math.floor(budget.max / 1024))))

  /**
   * The table of `rule` for `algorithm`. A rule id arriving with another algorithm (a changed
   * rule, or two limiters sharing this store with different rules of one name) gets a table of
   * its own rather than replacing the other's: two live limiters would otherwise reset each
   * other's keys on every alternation and neither would limit anything. The last few are kept.
   */
  function tableFor(rule: string, algorithm: Algorithm, now: number): KeyTable {
    let table = rule === lastRule && lastTable!.algorithm === algorithm ? lastTable : undefined
    if (table === undefined) {
      let list = tables.get(rule)
      if (list === undefined) {
        list = []
        tables.set(rule, list)
      }
      table = takeTable(list, algorithm)
      if (table === undefined) {
        table = new KeyTable(algorithm, maxKeys, budget, now)
        table.kin = kinOf(rule, list)
        list.unshift(table)
        trim(rule, list)
      }
    }
    lastRule = rule
    lastAlgorithm = algorithm
    lastTable = table
    return table
  }

  /**
   * Keeps the last TABLES_PER_RULE tables of a rule (FIGURE_TABLES_PER_RULE for one with
   * per-client figures); a table inheriting from one dropped no more does.
   */
  function trim(rule: string, list: KeyTable[]): void {
    const most = figureCarries.has(rule) ? FIGURE_TABLES_PER_RULE : TABLES_PER_RULE
    while (list.length > most) retire(list, list.pop()!)
  }

  /** The link between the tables of a rule with per-client figures; undefined for other rules. */
  function kinOf(rule: string, list: KeyTable[]): Kin | undefined {
    const carry = figureCarries.get(rule)
    if (carry === undefined) return undefined
    let kin = kins.get(rule)
    if (kin?.tables !== list) {
      kin = { tables: list, carry }
      kins.set(rule, kin)
    }
    return kin
  }

  function retire(list: KeyTable[], table: KeyTable): void {
    table.retire()
    retiredEvictions += table.evictions
    const at = list.indexOf(table)
    if (at >= 0) list.splice(at, 1)
    for (const other of list) if (other.inherit?.from === table) other.inherit = undefined
    if (table === lastTable) lastRule = lastAlgorithm = lastTable = undefined
  }

  /** A changed rule: a table for its new figures that inherits from the old one, if it has one. */
  function carryRule({ rule, from, to, carry }: RuleChange, now: number): void {
    const list = tables.get(rule)
    const old = list?.find((table) => sameRule(table.algorithm, from))
    // Not held: every key starts fresh under the new figures anyway.
    if (list === undefined || old === undefined) return
    const table = new KeyTable(to, maxKeys, budget, now)
    table.inherit = { from: old, carry, retire: (empty) => retire(list, empty) }
    table.kin = kinOf(rule, list)
    list.unshift(table)
    trim(rule, list)
  }

  const store: MemoryStore = {
    carryFigures(rule, carry) {
      if (typeof carry !== 'function') throw invalidOption('carry', 'expected a function')
      figureCarries.set(rule, carry)
      kins.delete(rule)
      const list = tables.get(rule)
      if (list !== undefined) for (const table of list) table.kin = kinOf(rule, list)
    },
    updateRules(changes, removed, now) {
      now = wholeTime(now)
      for (const rule of removed) {
        const list = tables.get(rule)
        if (list !== undefined) for (const table of [...list]) retire(list, table)
        tables.delete(rule)
      }
      for (const change of changes) carryRule(change, now)
      lastRule = lastAlgorithm = lastTable = undefined
    },
    get size() {
      let size = 0
      for (const list of tables.values()) for (const table of list) size += table.count
      return size
    },
    get bytes() {
      return budget.used
    },
    get evictions() {
      let evictions = retiredEvictions
      for (const list of tables.values()) for (const table of list) evictions += table.evictions
      return evictions
    },
    sweep(now) {
      now = wholeTime(now)
      let dropped = 0
      for (const list of tables.values()) for (const table of list) dropped += table.sweep(now)
      penalties?.sweep(now)
      return dropped
    },
    heldUntil(rule, algorithm, key) {
      return holding(rule, algorithm, key)?.freshAt(heldAt)
    },
    forget,
    ...memoryPenalties({
      consume: (charges, now) => store.consume(charges, now),
      look,
      forget,
      book,
    }),
    consumeOne(rule, algorithm, key, cost, now) {
      if (!Number.isSafeInteger(now)) now = wholeMs(now)
      // The checks of checkTime and checkCost, written out; those throw the errors when one
      // fails. Everything rare (errors, a new rule) stays out of line, so the JIT inlines the
      // decision.
      if (
        !(now >= 0 && now <= MAX_TIME_MS) ||
        !Number.isSafeInteger(cost) ||
        cost < 0 ||
        cost > algorithm.limit
      )
        refuse(now, cost, algorithm.limit)
      const table =
        algorithm === lastAlgorithm && rule === lastRule
          ? lastTable!
          : tableFor(rule, algorithm, now)
      if (cost === 0 && !holds(table, key)) return inspectFresh(algorithm, now)
      const offset = table.locateKey(key, hasher, now)
      if (table.logs !== undefined) return decideLogged(table, algorithm, offset, cost, now)
      const packed = table.packed
      if (packed !== undefined) return packed.decide(table.words, offset * 2, cost, now, true)
      return algorithm.decide(table.data, offset, cost, now, true)
    },
    consume(charges, now) {
      now = wholeTime(now)
      // Every charge is checked before any state is created or written.
      for (const charge of charges) checkCost(charge.cost, charge.algorithm.limit)
      if (charges.length !== 1) {
        checkOneAlgorithmPerRule(charges)
        const owned = charges.map((charge) => tableFor(charge.rule, charge.algorithm, now))
        return { decisions: consumeMany(charges, owned, hasher, scratch, now), at: now }
      }
      // One charge: deciding with commit is exactly what applyCharges does for it.
      const { rule, algorithm, key, cost } = charges[0]!
      const table = tableFor(rule, algorithm, now)
      if (cost === 0 && !holds(table, key)) {
        return { decisions: [inspectFresh(algorithm, now)], at: now }
      }
      const offset = table.locateKey(key, hasher, now)
      if (table.logs !== undefined) {
        return { decisions: [decideLogged(table, algorithm, offset, cost, now)], at: now }
      }
      if (table.packed !== undefined) {
        return {
          decisions: [table.packed.decide(table.words, offset * 2, cost, now, true)],
          at: now,
        }
      }
      return { decisions: [algorithm.decide(table.data, offset, cost, now, true)], at: now }
    },
    refund(charges, chargedAt, now) {
      now = wholeTime(now)
      chargedAt = wholeTime(chargedAt)
      for (let i = 0; i < charges.length; i++) checkCost(charges[i]!.cost)
      for (let i = 0; i < charges.length; i++) {
        const { rule, algorithm, key, cost } = charges[i]!
        giveBack(rule, algorithm, key, cost, chargedAt, now)
      }
    },
    settle(settlements, chargedAt, now) {
      now = wholeTime(now)
      chargedAt = wholeTime(chargedAt)
      // Every settlement is checked before any state is written: one unit, as a charge is.
      for (let i = 0; i < settlements.length; i++) checkSettlement(settlements[i]!)
      for (let i = 0; i < settlements.length; i++) settleOne(settlements[i]!, chargedAt, now)
    },
    refundOne(rule, algorithm, key, cost, chargedAt, now) {
      now = wholeTime(now)
      chargedAt = wholeTime(chargedAt)
      checkCost(cost)
      giveBack(rule, algorithm, key, cost, chargedAt, now)
    },
  }
  return store

  function forget(rule: string, algorithm: Algorithm, key: string): void {
    // Under per-client figures, the key is dropped under whichever figures hold it.
    holding(rule, algorithm, key)?.remove(heldAt)
    const table = tableOf(rule, algorithm)
    // Nor carried into the new figures later (a rule changed while running).
    if (table?.inherit !== undefined) forgetInherited(table, hasher.first, hasher.second)
  }

  /** A dry run of `cost` on the key: nothing written, and a key not held is not created. */
  function look(rule: string, algorithm: Algorithm, key: string, cost: number, now: number) {
    const table = holding(rule, algorithm, key, now)
    if (table === undefined) return decideFresh(algorithm, cost, now)
    const offset = table.offsetAt(heldAt)
    if (table.packed !== undefined) {
      return table.packed.decide(table.words, offset * 2, cost, now, false)
    }
    // The table's own algorithm: under per-client figures, the key's figures may be others.
    const held = table.algorithm
    if (table.logs === undefined) return held.decide(table.data, offset, cost, now, false)
    const log = table.data[offset]!
    if (log === NO_LOG) return decideFresh(held, cost, now)
    return held.decide(table.logs.data, log, cost, now, false)
  }

  /** Whether `table` holds a state for `key` (or will, carried from a predecessor or sibling). */
  function holds(table: KeyTable, key: string): boolean {
    hasher.hash(key)
    const { first, second } = hasher
    if (table.find(first, second) >= 0) return true
    if (table.inherit !== undefined && inheritsKey(table, first, second)) return true
    return (
      table.kin !== undefined && tableHolding(table.kin.tables, first, second, found) !== undefined
    )
  }

  /**
   * The table `rule` keeps for `algorithm` when it holds `key`, whose slot is then `heldAt`;
   * nothing is created. The table of the last call when it is this rule's (a slot given back
   * after its take).
   */
  function holding(
    rule: string,
    algorithm: Algorithm,
    key: string,
    now?: number,
  ): KeyTable | undefined {
    // Per-client figures: the key is held under whichever figures it was last charged with.
    const kin = figureCarries.has(rule) ? tables.get(rule) : undefined
    if (kin !== undefined) {
      hasher.hash(key)
      const table = tableHolding(kin, hasher.first, hasher.second, found)
      heldAt = found.slot
      return table
    }
    const table = tableOf(rule, algorithm)
    if (table === undefined) return undefined
    hasher.hash(key)
    heldAt = table.find(hasher.first, hasher.second)
    if (heldAt < 0 && table.inherit !== undefined && now !== undefined) {
      return inheritedHolding(table, now)
    }
    return heldAt < 0 ? undefined : table
  }

  /** The table `rule` keeps for `algorithm`, if any; nothing is created. */
  function tableOf(rule: string, algorithm: Algorithm): KeyTable | undefined {
    return algorithm === lastAlgorithm && rule === lastRule
      ? lastTable
      : tables.get(rule)?.find((t) => sameRule(t.algorithm, algorithm))
  }

  /**
   * A key of a changed rule not yet carried into its new figures: carried now, so that a look or a
   * refund sees the state its next charge will.
   */
  function inheritedHolding(table: KeyTable, now: number): KeyTable | undefined {
    const { first, second } = hasher
    if (!inheritsKey(table, first, second)) return undefined
    table.locate(first, second, now)
    heldAt = table.find(first, second)
    return heldAt < 0 ? undefined : table
  }

  /**
   * Settles one charge. A key the store no longer holds gets nothing back (it is fresh, or was
   * evicted), and an extra charged from a fresh state at `now`; a log first gets room for it.
   */
  function settleOne(settlement: Settlement, chargedAt: number, now: number): void {
    const { rule, algorithm, key, cost, actual } = settlement
    if (actual === cost) return
    const table = tableFor(rule, algorithm, now)
    let offset: number
    if (actual < cost) {
      hasher.hash(key)
      const slot = table.find(hasher.first, hasher.second)
      if (slot < 0) return
      offset = table.offsetAt(slot)
    } else offset = table.locateKey(key, hasher, now)
    const logs = table.logs
    if (logs === undefined) {
      algorithm.settle!(table.data, offset, cost, actual, chargedAt, now)
      return
    }
    const current = table.data[offset]!
    const held = current === NO_LOG ? 0 : algorithm.entries!.held(logs.data, current)
    const log =
      actual < cost
        ? current
        : logWithRoom(table, offset, Math.min(held + actual - cost, algorithm.limit), now)
    // NO_LOG: nothing held to give back, or a log the budget cannot hold (dropped, as evicted).
    if (log !== NO_LOG) algorithm.settle!(logs.data, log, cost, actual, chargedAt, now)
  }

  function giveBack(
    rule: string,
    algorithm: Algorithm,
    key: string,
    cost: number,
    chargedAt: number,
    now: number,
  ): void {
    const table = holding(rule, algorithm, key, now)
    // A key that is not held is fresh (or was evicted): there is nothing to give back.
    if (table === undefined) return
    const offset = table.offsetAt(heldAt)
    // The table's own algorithm: under per-client figures, the key's figures may be others.
    const held = table.algorithm
    if (table.packed !== undefined)
      table.packed.refund(table.words, offset * 2, cost, chargedAt, now)
    else if (table.logs === undefined) held.refund(table.data, offset, cost, chargedAt, now)
    else if (table.data[offset] !== NO_LOG) {
      held.refund(table.logs.data, table.data[offset]!, cost, chargedAt, now)
    }
  }
}

/** Throws unless `settlement` is one the store can apply (see `Store.settle`). */
function checkSettlement({ algorithm, cost, actual }: Settlement): void {
  checkCost(cost)
  checkCost(actual)
  if (typeof algorithm.settle !== 'function' || algorithm.packed !== undefined) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `${algorithm.name} charges cannot be settled as given: pass the algorithm through reservable() (a settled state may not fit its 8-byte form)`,
      { field: 'settle' },
    )
  }
}

/**
 * A cost-0 inspection of a key the store does not hold, decided on a fresh state: an inspection
 * writes nothing, and inserting the key could evict one that holds a count.
 */
function inspectFresh(algorithm: Algorithm, now: number): Decision {
  return decideFresh(algorithm, 0, now)
}

/** `cost` decided on a fresh state, as a dry run. */
function decideFresh(algorithm: Algorithm, cost: number, now: number): Decision {
  const fresh = new Array<number>(algorithm.stateSize).fill(0)
  algorithm.init(fresh, 0, now)
  return algorithm.decide(fresh, 0, cost, now, false)
}

/** Throws the error for an invalid time or cost, or a cost above the rule's capacity. */
function refuse(now: number, cost: number, limit: number): never {
  checkTime(now)
  checkCost(cost)
  throw costTooHigh(cost, limit)
}

function checkMaxBytes(maxBytes: number): number {
  // The least is named in MiB too: 1048576 alone does not say why.
  if (Number.isSafeInteger(maxBytes) && maxBytes >= MIN_MAX_BYTES) return maxBytes
  throw invalidOption(
    'maxBytes',
    `expected a whole number of bytes ≥ ${MIN_MAX_BYTES} (1 MiB), got ${shown(maxBytes)}`,
  )
}
