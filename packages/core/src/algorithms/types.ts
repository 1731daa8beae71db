import type { Decision } from '../decision.js'
import type { createScheduler } from '../wait/scheduler.js'
import type { holdSlots } from '../wait/slot-holding.js'
import type { createSlotQueues, SlotQueueParams } from '../wait/slot-queues.js'
import type { CalendarWindows } from './calendar.js'
import type { CarryStrategy } from './carried-use.js'

/** The six counting rules (the leaky bucket as a meter and as a queue), and `concurrency`, which
 * counts requests in flight. */
export type AlgorithmName =
  | 'concurrency'
  | 'token_bucket'
  | 'gcra'
  | 'leaky_bucket'
  | 'leaky_queue'
  | 'fixed_window'
  | 'sliding_log'
  | 'sliding_window'

/**
 * A key's state: a run of `stateSize` numbers starting at `offset` in a shared array. Stores keep
 * millions of these side by side in one typed array; the pure `step` API uses a plain array.
 */
export type StateSlots = Float64Array | number[]

/**
 * What a rule promises, in the terms of the IETF RateLimit-Policy field: `quota` units per
 * `windowMs`. For a rate rule that is its sustained rate; its burst is `Algorithm.limit`.
 */
export type QuotaPolicy = {
  readonly quota: number
  readonly windowMs: number
  /**
   * What the quota counts when it is not requests over a window (the field's `qu`):
   * `concurrent-requests` for a concurrency rule, whose `windowMs` is 0.
   */
  readonly unit?: 'concurrent-requests'
}

/**
 * The scaled integers an algorithm was compiled to, so that another runtime (the Redis store's
 * Lua scripts) can run exactly the same arithmetic. Rate rules: `unitsPerToken` units make one
 * token, `unitsPerMs` units flow in per ms, `capacity` = burst × unitsPerToken. Window rules: at
 * most `limit` units per `windowMs`.
 */
export type AlgorithmParams =
  | {
      readonly kind: 'rate'
      readonly unitsPerMs: number
      readonly unitsPerToken: number
      readonly capacity: number
      readonly burst: number
      /** A queue's `delay` in ticks (excess served at once). */
      readonly delayTicks?: number
      /** A queue's `maxWaitMs` in ticks, or infinite when unbounded. */
      readonly maxWaitTicks?: number
    }
  | {
      readonly kind: 'window'
      readonly limit: number
      /** The window, or a calendar window's mean length (its policy's window). */
      readonly windowMs: number
      /** Set for a fixed window aligned to the calendar: where its windows lie. */
      readonly calendar?: CalendarWindows
      /** Set for a fixed window whose windows start at each key's first charge. */
      readonly anchor?: 'first-charge'
      /** Set for a sliding window of sub-window counters: how many per window. */
      readonly buckets?: number
    }
  | {
      readonly kind: 'concurrency'
      readonly limit: number
      /** What a refusal tells the client to wait, in ms. */
      readonly retryAfterMs: number
    }

/**
 * How a state made of entries can be kept in the room it needs: `header` numbers, the third of
 * which is the room, then a ring of `room` entries. The full state (`stateSize`) has room for
 * `limit`; a decision of `cost` needs room for min(limit, held + cost).
 */
export type EntryLog = {
  readonly header: number
  /** How many entries the state holds. */
  held(slots: StateSlots, offset: number): number
  /** Copies a state to another place with `room` (≥ held) entries, oldest first. */
  move(from: StateSlots, fromOffset: number, to: StateSlots, toOffset: number, room: number): void
}

/**
 * An algorithm's state kept in two uint32 words (8 bytes) instead of `stateSize` doubles, for
 * the memory store's slots (built by store/packed-forms.ts for an algorithm with `packed`); `at`
 * is the index of the first word. Every method decides, writes and reads exactly what the
 * algorithm's own method of that name does on the unpacked state.
 */
export interface PackedState {
  init(words: Uint32Array, at: number, now: number): void
  decide(words: Uint32Array, at: number, cost: number, now: number, commit: boolean): Decision
  refund(words: Uint32Array, at: number, cost: number, chargedAt: number, now: number): void
  freshAt(words: Uint32Array, at: number): number
  /** Writes the state at `at` as the algorithm's `stateSize` numbers at `offset` of `to`. */
  unpack(words: Uint32Array, at: number, to: StateSlots, offset: number): void
  /** The reverse of `unpack`, for a state the algorithm wrote (so one that fits). */
  pack(from: StateSlots, offset: number, words: Uint32Array, at: number): void
}

/**
 * A counting rule compiled from its parameters: pure integer arithmetic on a key's state, no
 * I/O and no clock of its own. `now` is always passed in, as whole ms.
 */
export interface Algorithm {
  readonly name: AlgorithmName
  /** Burst (rate rules) or limit (window rules): the most any single moment can admit. */
  readonly limit: number
  readonly policy: QuotaPolicy
  /** The scaled integers behind the arithmetic (set by every built-in factory). */
  readonly params?: AlgorithmParams
  /** How many numbers one key's state takes (at most, for an algorithm with `entries`). */
  readonly stateSize: number
  /** Set by an algorithm whose state is a log of entries (the sliding log). */
  readonly entries?: EntryLog
  /**
   * Set by an algorithm whose admissions may wait for a slot (the leaky queue): what the limiter
   * waits them out with. Carried by the algorithm so that a bundle without one holds none of it.
   */
  readonly scheduler?: typeof createScheduler
  /**
   * Set by a concurrency rule whose refused requests may wait for a slot (`queue`): the line's
   * length, longest wait and order, kept by the limiter.
   */
  readonly slotQueue?: SlotQueueParams
  /** Set with `slotQueue`: what the limiter keeps its lines with (a bundle without holds none). */
  readonly slotQueues?: typeof createSlotQueues
  /**
   * Set by an algorithm whose requests hold slots or wait (concurrency, the leaky queue): what a
   * limiter gives slots back and waits with (`release`, `hold`). Carried by the algorithm so that
   * a bundle without one holds none of it.
   */
  readonly holdSlots?: typeof holdSlots
  /**
   * Set by an algorithm whose state holds units until they are given back (concurrency): time
   * never frees them, so a store never drops a key that is not fresh to make room for another.
   */
  readonly heldUntilReleased?: true
  /**
   * Set by an algorithm whose every reachable state also fits in 8 bytes (the token and leaky
   * buckets and the fixed window, when their capacity or limit fits): the memory store then keeps
   * the same state, with the same arithmetic, in two uint32 words of its slots instead of
   * `stateSize` doubles, through the form it builds from the algorithm's name and `params` (see
   * `PackedState`, store/packed-forms.ts). Cleared on an algorithm whose states must stay wide
   * (a rule that settles: `reservable`).
   */
  readonly packed?: true
  /**
   * Set on the algorithm of a rule that declares a `version`: the version of its figures and
   * how a state written under other figures carries into them (the rule's `onChange`, when it
   * declares one), for a store that keeps the figures beside each state (Redis). The memory
   * store ignores it.
   */
  readonly versioned?: {
    readonly version: number
    readonly onChange: CarryStrategy | undefined
  }
  /** Writes the state of a key never seen before: full capacity at `now`. */
  init(slots: StateSlots, offset: number, now: number): void
  /**
   * Decides a request of `cost` at `now`. Writes the charge into `slots` only when `commit` is
   * true and the request is allowed: a denial, or a dry run, takes nothing. One change is made
   * whatever the outcome: a state that lies further ahead of `now` than a steady clock allows
   * (the clock stepped back more than the rule's reset span) is moved to `now`, keeping what it
   * has used, so that the step costs the key at most one reset span; stores write it back even
   * after a denial.
   * Throws `ERR_RL_COST_EXCEEDS_CAPACITY` for a cost above `limit`. Callers pass whole ms and a
   * whole cost ≥ 0 (the public `step` and the stores check both).
   */
  decide(slots: StateSlots, offset: number, cost: number, now: number, commit: boolean): Decision
  /**
   * Gives back `cost` units charged at `chargedAt`, as far as they still count at `now`. A window
   * algorithm returns nothing once the charge's window has rolled over. A rate algorithm adds the
   * cost back, never beyond a full bucket: its state cannot tell whether the bucket filled up and
   * was drained again since the charge, so a client may then pass up to that cost beyond its
   * burst once (crediting only what time had not made up for would give a slow failed request
   * nothing back).
   */
  refund(slots: StateSlots, offset: number, cost: number, chargedAt: number, now: number): void
  /**
   * Replaces `charged` units charged at `chargedAt` (a reservation's estimate) with `actual`, as
   * of `now`: the state becomes what charging `actual` at `chargedAt` would have made, as far as
   * the state can tell (see docs/concepts/charging-after-the-response.md). Fewer units are given back as `refund`
   * gives them; more are charged on top, denial or not, and may put the state into debt: a rate
   * state goes below empty, by at most one burst (beyond it the units are forgiven), a window
   * counts above its limit. A window algorithm gives nothing back once the charge's window has
   * rolled over, and charges an extra then to the window of `now`. Works on the wide state only
   * (a settled state may not fit 8 bytes: see `reservable`). Absent on algorithms whose charge
   * cannot be settled (the leaky queue's slot, a concurrency slot).
   */
  settle?(
    slots: StateSlots,
    offset: number,
    charged: number,
    actual: number,
    chargedAt: number,
    now: number,
  ): void
  /**
   * The time (ms) from which this state is back to full capacity, so dropping it would lose
   * nothing. Stores use it for expiry and eviction.
   */
  freshAt(slots: StateSlots, offset: number): number
}
