import type { RequestFacts, StoreErrorContext, Verdict } from '../limiter/types.js'
import type { Rule, RuleMode } from '../rules/types.js'

/**
 * What happened to one request under one rule: the vocabulary every observer counts in.
 *
 * - `admitted`: the rule let it through and charged it;
 * - `denied`: an enforcing rule refused it (its limit, or an identity it keys on was missing);
 * - `shadow-denied`: a shadow rule would have refused it (it went on);
 * - `store-failed-open`, `store-failed-closed`: the store failed and the rule's `onStoreError`
 *   let the request through, or refused it;
 * - `queued`: the request was admitted after a wait for its slot: in an enforcing queue rule
 *   (`leaky_queue`, `delayMs` > 0), or in the line of an enforcing concurrency rule with a
 *   `queue` (told when the slot came); it is charged as an admission, its wait told by
 *   `queue.wait`;
 * - `shed`: a concurrency rule refused it: every slot was in use.
 */
export type RuleOutcome =
  | 'admitted'
  | 'denied'
  | 'shadow-denied'
  | 'queued'
  | 'shed'
  | 'store-failed-open'
  | 'store-failed-closed'

/** One rule's part in one request (several per request when several rules matched). */
export type RuleEvent = {
  readonly type: 'rule'
  readonly rule: string
  readonly mode: RuleMode
  readonly outcome: RuleOutcome
  /** Units this request was charged under the rule (0 when it was not charged). */
  readonly charged: number
  /** What the rule had left after the decision, and its limit; undefined on a store failure. */
  readonly remaining: number | undefined
  readonly limit: number | undefined
  /**
   * True when the rule was decided in this process because the shared store failed
   * (`onStoreError: 'fallback'`): `remaining` and `limit` are then the process's share.
   */
  readonly degraded?: boolean
}

/** One request's verdict, with the facts it was decided on (for explanations and reports). */
export type DecisionEvent = {
  readonly type: 'decision'
  readonly verdict: Verdict
  /** Undefined for `limiter.check`, which decides a key given as it is. */
  readonly facts: RequestFacts | undefined
}

/** The name a store is known by in events: `memory`, `redis`, or `custom`. */
export type StoreKind = 'memory' | 'redis' | 'custom'

/**
 * One call to the store, timed (only when an observer listens). The memory store's calls are not
 * timed: they answer synchronously in less time than the two clock reads that would time them.
 */
export type StoreCallEvent = {
  readonly type: 'store.call'
  readonly store: StoreKind
  readonly operation: 'consume' | 'refund' | 'settle'
  readonly durationMs: number
  /** The error's code (`ERR_RL_STORE_UNAVAILABLE`…), or `error` for one without a code. */
  readonly error: string | undefined
}

/**
 * The store failed for a request (it threw, rejected, timed out or answered nonsense), or the
 * clock did (`ERR_RL_CLOCK_FAILED`); the rules' `onStoreError` decided.
 */
export type StoreErrorEvent = StoreErrorContext & {
  readonly type: 'store.error'
  readonly store: StoreKind
  /** A bounded reason: the error's `ERR_RL_*` code, or `error`. */
  readonly reason: string
}

/**
 * The clock stepped (an NTP correction, a VM resumed, someone set the time). `backward`: it read
 * earlier than its previous reading, by `ms`. `forward`: it ran ahead of the runtime's monotonic
 * clock by at least `clockStepForwardMs` since it was last compared with it, by `ms` — idle time
 * moves both clocks alike, so it is never taken for a step.
 */
export type ClockStepEvent = {
  readonly type: 'clock.step'
  readonly direction: 'backward' | 'forward'
  readonly ms: number
}

/**
 * A request waiting for its slot, once when it starts to wait (`waiting`) and once when the wait
 * ends (`ms` how long it waited, on the limiter's clock): `served` at its slot, `refused` when
 * no slot came for it (`maxWait` passed, a full line pushed it out, or another rule refused it
 * once a slot came), or `abandoned` when its client went away first.
 *
 * In a queue rule (`leaky_queue`), `rule` is the one with the longest delay and `waiting`'s `ms`
 * the wait it was given. For a slot of a concurrency rule with a `queue` (a refusal marked
 * `waitsForSlot`), `rule` is the rule whose line it waits in and `waiting`'s `ms` its `maxWait`.
 */
export type QueueWaitEvent = {
  readonly type: 'queue.wait'
  readonly rule: string
  readonly state: 'waiting' | 'served' | 'refused' | 'abandoned'
  readonly ms: number
}

/**
 * Slots of a concurrency rule taken by an admitted request (`change` > 0, its cost) or given
 * back by `release` (`change` < 0): their running sum is the slots this process holds.
 */
export type ConcurrencySlotsEvent = {
  readonly type: 'concurrency.slots'
  readonly rule: string
  readonly change: number
}

/**
 * Slots of a concurrency rule whose lease ran out before their holder renewed or released them
 * (its process died, its event loop stalled past the lease time, or its renewals failed): their
 * units may have gone to another request. Told by a store that keeps leases, through
 * `ObservableStore.observe`: the Redis store tells each unit once, from the call that removed it
 * (a take or release whose sweep found it ended, whichever process held it, or its holder's
 * renewal). Units removed by the key's own expiry are told by nobody.
 */
export type LeaseExpiredEvent = {
  readonly type: 'concurrency.lease-expired'
  readonly rule: string
  readonly count: number
}

/**
 * The limiter's rules were changed while running (`limiter.update`, `middleware.update`, a
 * watched rules file): `applied`, the new rules run (`rules`); or `refused`, the set failed
 * validation or could not be carried, and the running rules stay (`rules` are those).
 */
export type RulesUpdateEvent = {
  readonly type: 'rules.update'
  readonly outcome: 'applied' | 'refused'
  /** The rules that run after the update: the new ones, or (refused) the same as before. */
  readonly rules: readonly Rule[]
  /** Why it was refused, bounded: the error's `ERR_RL_*` code, or `error`; none when applied. */
  readonly reason: string | undefined
}

/** What a store may tell observers of its own accord (not as an answer to a call). */
export type StoreEvent = LeaseExpiredEvent

/**
 * A store that tells events of its own (a store of leases, that expires them): `observedLimiter`
 * calls `observe` once with a listener that hands them to its observers.
 */
export type ObservableStore = {
  /**
   * Called once by `observedLimiter`, with the listener that hands the store's events to its
   * observers.
   */
  readonly observe: (listener: (event: StoreEvent) => void) => void
}

/**
 * Everything an observer may be told. Names are `noun` or `noun.verb`; a kind of event added
 * later gets a type of its own, so observers ignore what they do not know.
 */
export type ObservedEvent =
  | RuleEvent
  | DecisionEvent
  | StoreCallEvent
  | StoreErrorEvent
  | ClockStepEvent
  | QueueWaitEvent
  | ConcurrencySlotsEvent
  | LeaseExpiredEvent
  | RulesUpdateEvent

/** The kinds of event, for `Observer.events`. */
export type ObservedEventType = ObservedEvent['type']

/** What the observed limiter shows an observer once, when it starts: for gauges that poll. */
export type ObservedLimiterInfo = {
  /** The validated rules, in order. */
  readonly rules: readonly Rule[]
  readonly store: object
  readonly storeKind: StoreKind
}

/**
 * Listens to a limiter. `observe` is called synchronously on the request's path: keep it to
 * counting. An observer that throws is reported once (`WARN_OBSERVER_THREW`) and the request is
 * decided anyway.
 */
export type Observer = {
  /** Called once per limiter it is given to, before any event. */
  readonly attach?: ((limiter: ObservedLimiterInfo) => void) | undefined
  /** Receives each event of a kind it counts. Keep it cheap: it runs on the request path. */
  readonly observe: (event: ObservedEvent) => void
  /**
   * The kinds of event it counts: the limiter builds no other for it, and times no store call
   * unless one of its observers counts `store.call`. @default every kind
   */
  readonly events?: readonly ObservedEventType[] | undefined
}
