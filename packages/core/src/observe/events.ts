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
 * - `queued`, `shed`: reserved for rules that make a request wait for its turn, and for load
 *   shedding (concurrency limits); nothing emits them yet.
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

/** One call to the store, timed (only when an observer listens). */
export type StoreCallEvent = {
  readonly type: 'store.call'
  readonly store: StoreKind
  readonly operation: 'consume' | 'refund'
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

/** The clock read earlier than before (an NTP correction): `ms` is how far back. */
export type ClockStepEvent = {
  readonly type: 'clock.step'
  readonly direction: 'backward'
  readonly ms: number
}

/**
 * Everything an observer may be told. Names are `noun` or `noun.verb`; a kind of event added
 * later (a queue's wait, a concurrency slot's lease) gets a type of its own, so observers
 * ignore what they do not know.
 */
export type ObservedEvent =
  | RuleEvent
  | DecisionEvent
  | StoreCallEvent
  | StoreErrorEvent
  | ClockStepEvent

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
  readonly observe: (event: ObservedEvent) => void
}
