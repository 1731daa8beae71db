import type { CarryStrategy } from '../algorithms/carried-use.js'
import type { Algorithm, StateSlots } from '../algorithms/types.js'
import type { Decision } from '../decision.js'

/** One rule's share of a request: charge `cost` to `key` under `rule`. */
export type Charge = {
  /** The rule id; stores namespace keys by it, so two rules never share state. */
  readonly rule: string
  readonly algorithm: Algorithm
  /** The identity being limited, e.g. `ip:203.0.113.7` or `api_key:k_123`. Any string content. */
  readonly key: string
  /** Whole units ≥ 0; 0 inspects without charging. */
  readonly cost: number
  /** A shadow charge is decided and counted but never denies the request. */
  readonly shadow: boolean
  /**
   * The rule's penalty, on the charges of a rule that penalises denials: such charges go to
   * `consumePenalised`, never to `consume`.
   */
  readonly penalty?: Penalty | undefined
}

/** A rule's penalty as a store applies it: whole ms, and the factor a whole number ≥ 1. */
export type Penalty = {
  /** The block of a first offence. */
  readonly blockMs: number
  readonly factor: number
  readonly maxBlockMs: number
  /** Offences are forgotten this long after the end of the last block. */
  readonly forgetAfterMs: number
}

/** What a store remembers of one key's offences under one rule. */
export type Offences = {
  /** Offences remembered, ≥ 0 (0 after an operator's block of a key that never offended). */
  readonly count: number
  /** Until when (ms since the epoch) the key is blocked: not blocked once it is ≤ now. */
  readonly blockedUntil: number
}

/** `consume`'s answer for a request with penalised charges: the offences beside the decisions. */
export type PenalisedOutcome = Outcome & {
  /** Per charge, in order: the key's offences under a penalised charge's rule, or undefined. */
  readonly offences: readonly (Offences | undefined)[]
}

/** One key of one rule, as an operator names it (`peek`, `reset`, `block`…). */
export type KeyRef = {
  readonly rule: string
  readonly algorithm: Algorithm
  readonly key: string
}

/** What `peek` sees of a key: a look at cost 0, and its offences. */
export type KeyStatus = {
  /** What a cost-0 charge would answer now: what is left, when the key is back to full. */
  readonly decision: Decision
  /** Undefined when the store remembers none (or the rule has no penalty). */
  readonly offences: Offences | undefined
  /** The time (ms) the store looked at, as `Outcome.at`. */
  readonly at: number
}

/**
 * A reserved charge settled: `cost` units were charged (the estimate) and `actual` is what the
 * request really cost, a whole number ≥ 0 that may exceed the rule's capacity.
 */
export type Settlement = Charge & { readonly actual: number }

/**
 * A rule that keeps its id but changes its figures (`limiter.update`): how a store carries each
 * key's state from `from` into `to`.
 */
export type RuleChange = {
  readonly rule: string
  readonly from: Algorithm
  readonly to: Algorithm
  /**
   * The key's state under `from` (`from.stateSize` numbers at `offset`, or a log) as `to` holds
   * it at `now`; undefined when the key starts fresh. Pure: it writes nothing.
   */
  readonly carry: (slots: StateSlots, offset: number, now: number) => number[] | undefined
}

/**
 * How a key's state carries between two sets of figures of one rule (per-client figures, the
 * limiter's `figures` option): its state under `from` (`from.stateSize` numbers at `offset`, or
 * a log) as `to` holds it at `now`, by the rule's `onChange`; undefined when it starts fresh.
 * Pure: it writes nothing.
 */
export type FiguresCarry = (
  from: Algorithm,
  slots: StateSlots,
  offset: number,
  to: Algorithm,
  now: number,
) => number[] | undefined

/** What a store answers for a request: one decision per charge, in order, and the time it used. */
export type Outcome = {
  readonly decisions: readonly Decision[]
  /** The time (ms) the store decided at: the caller's `now`, or the store's own clock (Redis `TIME`). */
  readonly at: number
}

/**
 * Where rate-limit state lives. A store applies a request's charges as one unit:
 *
 * - if every enforcing charge is allowed, every allowed charge is written (a shadow charge that
 *   would deny is reported and not written);
 * - if any enforcing charge is denied, nothing is written, and the charges that would have been
 *   allowed are reported at cost 0 (what is left, nothing taken);
 * - charges of one rule and key in one request count together: each is tried with the earlier
 *   ones that passed, and charges that together exceed the limit are denied.
 *
 * One write is made whatever the outcome: a state moved to `now` by a clock that stepped back
 * further than its rule's reset span (see `Algorithm.decide`); it takes nothing.
 *
 * The memory store answers synchronously; remote stores return promises.
 */
export interface Store {
  /**
   * Decides `charges` (one per matching rule) at `now` as one unit: when any enforcing charge is
   * denied, none is taken. The limiter calls it once per request it decides (`consumePenalised`
   * instead when a charge carries a penalty).
   */
  consume(charges: readonly Charge[], now: number): Outcome | Promise<Outcome>
  /**
   * Gives back charges made at `chargedAt` (an `Outcome.at`), as far as they still count: a
   * window that has rolled over since returns nothing.
   */
  refund(charges: readonly Charge[], chargedAt: number, now: number): void | Promise<void>
  /**
   * Replaces, as one unit, the estimates charged at `chargedAt` (an `Outcome.at`) with what the
   * requests really cost (`Algorithm.settle`): fewer units are given back as `refund` gives
   * them, more are charged on top without a decision, and may leave a state in debt. Each
   * settlement's algorithm must have `settle` and no 8-byte form (`reservable`). Optional: a
   * limiter with rules that settle refuses a store without it at start-up.
   */
  settle?(settlements: readonly Settlement[], chargedAt: number, now: number): void | Promise<void>
  /**
   * `consume` with penalties, in the same call (one round trip for a remote store). Some charges
   * carry a `penalty`; their keys' offences are read first:
   *
   * - if an enforcing penalised charge's key is blocked at `now` (`blockedUntil > now`), nothing
   *   is written, and the charges are reported as a denied request's are: a charge that would
   *   pass at cost 0 (what is left, nothing taken), one that would not as its denial (when it
   *   would pass); the request is the limiter's to refuse;
   * - otherwise the charges are decided as `consume` decides them, and each enforcing penalised
   *   charge that is denied records an offence: the count goes up by one (from 0 once
   *   `forgetAfterMs` has passed since the last block ended) and the key is blocked from `now`
   *   for `blockMs × factor^(count − 1)`, at most `maxBlockMs`.
   *
   * Offences are kept apart from the rule's state and outlive its expiry: until `forgetAfterMs`
   * after the block ends. Optional: a limiter with penalised rules refuses a store without it.
   */
  consumePenalised?(
    charges: readonly Charge[],
    now: number,
  ): PenalisedOutcome | Promise<PenalisedOutcome>
  /**
   * Operator: the key's state as a cost-0 charge sees it, and its offences under `penalty` (or
   * none without one). Writes nothing: a key the store does not hold is not created.
   */
  peek?(ref: KeyRef, penalty: Penalty | undefined, now: number): KeyStatus | Promise<KeyStatus>
  /** Operator: drops the key's state and its offences; its next charge finds it fresh. */
  reset?(ref: KeyRef, now: number): void | Promise<void>
  /**
   * Operator: blocks the key under its rule until `until` (ms), whatever its count (kept, or 0);
   * forgotten `forgetAfterMs` after it ends, as an offence's block.
   */
  block?(ref: KeyRef, penalty: Penalty, until: number, now: number): void | Promise<void>
  /** Operator: lifts the key's block and forgets its offences under the rule. */
  unblock?(ref: KeyRef, now: number): void | Promise<void>
  /**
   * Rules changed while running (`limiter.update`): each change's keys carry their state into
   * the new figures (`RuleChange.carry`), at the latest when the key is next charged; the states
   * of `removed` rules are dropped. Optional: a limiter refuses to change the figures of a rule
   * on a store without it (added and removed rules need none).
   */
  updateRules?(
    changes: readonly RuleChange[],
    removed: readonly string[],
    now: number,
  ): void | Promise<void>
  /**
   * Marks `rule` as one whose keys are charged under figures of their own (the limiter's
   * `figures` option): a key charged under other figures than those its state was written under
   * carries that state (`carry`), at the latest when it is next charged, and a refund or reset
   * finds it under whichever figures hold it. `own` (the rule's algorithm, with its `versioned`
   * when it declares a version) and `onChange` (the rule's) are for a store that carries in its
   * own code (Redis); it may throw, naming the rule, when it cannot carry that algorithm's
   * states. Optional: a limiter refuses per-client figures on a store without it, at start-up.
   */
  carryFigures?(
    rule: string,
    carry: FiguresCarry,
    own: Algorithm,
    onChange: CarryStrategy | undefined,
  ): void
  /**
   * For a store that fails over (`fallbackStore`): decides `charges` in this process, with each
   * rule's share of its allowance, after `consume` failed. The limiter calls it, synchronously,
   * for the charges of rules whose `onStoreError` is `'fallback'`; a limiter with such rules
   * refuses a store without it at start-up.
   */
  consumeLocally?(charges: readonly Charge[], now: number): Outcome
  /**
   * For a store that bounds its own calls: the most one takes before it fails by itself with
   * `ERR_RL_STORE_UNAVAILABLE` (the Redis store's `timeoutMs`). The limiter then sets no timer of
   * its own, unless its `storeTimeoutMs` is given.
   */
  readonly timeoutMs?: number
  /**
   * True for a store other processes decide in too (Redis). A concurrency slot one of them gives
   * back wakes nobody waiting in this process, so requests waiting for a slot look again every
   * `retryAfterMs` of their rule.
   */
  readonly shared?: boolean
}
