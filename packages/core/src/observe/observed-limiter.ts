import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { systemClock } from '../clock.js'
import { createLimiter } from '../limiter/create-limiter.js'
import { isPromiseLike } from '../limiter/engine.js'
import { reportFallback } from '../limiter/fallback.js'
import { operatorPartsOf, registerOperatorParts } from '../limiter/operator-parts.js'
import { LIMITER_OPTIONS } from '../limiter/option-names.js'
import { CLOCK_FAILED, createReporter, isClockFailure } from '../limiter/report.js'
import type {
  Limiter,
  LimiterOptions,
  Logger,
  MaybePromise,
  StoreErrorContext,
  Verdict,
} from '../limiter/types.js'
import { FOREIGN_OPTIONS } from '../options/foreign-options.js'
import { checkMethods, checkWhole } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { checkRules, EVERY_READER } from '../rules/define-rules.js'
import type { Rule } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import type { ObservableStore, ObservedLimiterInfo, Observer } from './events.js'
import { checkObservers, type Emit, fanOut } from './fan-out.js'
import { holdings, type Tell } from './holdings.js'
import { observedUpdate } from './observed-update.js'
import { failureEventsOf, ruleEventsOf } from './outcomes.js'
import { elapsedMs, reasonOf, storeKindOf, timedStore } from './timed-store.js'
import { DEFAULT_CLOCK_STEP_FORWARD_MS, watchedClock } from './watched-clock.js'

/** `createLimiter`'s options, and who is told what the limiter does. */
export type ObservedLimiterOptions = LimiterOptions & {
  /**
   * Who is told what the limiter does (`@tollgate/opentelemetry`'s metrics, `shadowReport()`,
   * `explainDecisions()`…), in this order. An empty list is the plain limiter.
   */
  readonly observers: readonly Observer[]
  /**
   * The runtime's monotonic clock, in ms: it times store calls, and tells the clock's steps
   * forward from idle time. Tests give their own. @default `performance.now`
   */
  readonly monotonic?:
    | {
        /** Ms since an arbitrary origin, never going back. */
        now(): number
      }
    | undefined
  /**
   * How far the clock must run ahead of the monotonic clock to be told as a step forward, in
   * ms. @default 1000
   */
  readonly clockStepForwardMs?: number | undefined
}

/**
 * A limiter that tells `observers` what it does: each request's verdict and each rule's part in
 * it, each store call timed (but the memory store's), store failures, clock steps, queue waits
 * and concurrency slots (see `ObservedEvent`). It decides exactly as `createLimiter` with the
 * same options does; the plain limiter pays nothing for this, since none of it is there. Pass
 * it to an adapter in place of the rules. Events no observer counts (`Observer.events`) are
 * not built. Its `update` changes the rules as the plain limiter's does and tells each update
 * (`rules.update`); a set adding a concurrency or queue rule it was not made with is refused.
 * @example
 * const limiter = observedLimiter({ rules, observers: [tollgateMetrics()] })
 * app.use(rateLimit(limiter))
 */
export function observedLimiter(options: ObservedLimiterOptions): Limiter {
  const { observers: given, monotonic, clockStepForwardMs, ...limiterOptions } = options
  refuseUnknownOptions(limiterOptions, LIMITER_OPTIONS, 'observedLimiter()', FOREIGN_OPTIONS)
  const observers = checkObservers(given)
  const elapsed = monotonicOf(monotonic)
  const forwardMs = forwardStepOf(clockStepForwardMs)
  if (observers.length === 0) return createLimiter(limiterOptions)
  const rules = rulesOf(options, limiterOptions)
  const store = options.store ?? memoryStore()
  // What createLimiter refuses is given to it as it is, so that it is refused the same way.
  const usable = typeof store?.consume === 'function' && typeof store.refund === 'function'
  const clock = options.clock ?? systemClock
  const storeKind = storeKindOf(store)
  const info: ObservedLimiterInfo = { rules, store, storeKind }
  const { emit, wants } = fanOut(observers, info, defaultLogger(options.logger))
  // What events are told by, rule by rule: made again when an update changes the rules.
  let modes = modesOf(rules)
  let concurrencyRules = concurrencyRulesOf(rules)
  // The app's onError, else the limiter's own warning (a reporter like the limiter's): what
  // the app sees of a store failure is the same, observed or not.
  const reporter = createReporter(defaultLogger(options.logger), undefined)
  const onError =
    options.onError ??
    ((error: unknown, c: StoreErrorContext) =>
      isClockFailure(error)
        ? reporter.warnOnce('WARN_CLOCK_FAILED', CLOCK_FAILED)
        : c.fallback
          ? reportFallback(reporter, error, c.rules, c.fallback)
          : reporter.storeError(error, c.operation, c.rules, c.failClosed))
  const observeError = (error: unknown, context: StoreErrorContext) => {
    emit({ type: 'store.error', ...context, store: storeKind, reason: reasonOf(error) })
    if (context.operation === 'consume') failureEventsOf(context, modes, emit)
    onError(error, context)
  }
  const watchesClock = typeof clock?.now === 'function' && wants('clock.step')
  // The memory store answers synchronously, in less time than the two monotonic clock reads
  // that would time it (about half of what the histograms cost a request), and below the
  // duration histogram's first bound: its calls are not timed. Its figures are its gauges.
  const timed = usable && storeKind !== 'memory' && wants('store.call')
  const limiter = createLimiter({
    ...limiterOptions,
    rules,
    store: timed ? timedStore(store, storeKind, emit, elapsed) : store,
    clock: watchesClock ? watchedClock(clock, emit, elapsed, forwardMs) : clock,
    onError: observeError,
  })
  if (usable) observeStoreEvents(store, emit)
  const countsRules = wants('rule')
  const countsDecisions = wants('decision')
  const tell: Tell = (verdict, facts, waited) => {
    if (countsRules)
      ruleEventsOf(verdict.allowed, verdict.decisions, concurrencyRules, emit, waited)
    held.decided(verdict)
    if (countsDecisions) emit({ type: 'decision', verdict, facts })
  }
  const held = holdings(rules, clock, emit, wants, tell)

  const decided = (verdict: Verdict, facts: Parameters<Limiter['decide']>[0]) => {
    // A refusal that may wait for a slot is told once its wait ends (by `hold`), as what it
    // ends in: each request counts once per rule.
    if (verdict.waitsForSlot === true) held.mayWait(verdict, facts)
    else tell(verdict, facts)
    return verdict
  }
  const observed: Limiter = {
    get rules() {
      return limiter.rules
    },
    store,
    get clockStepsBack() {
      return limiter.clockStepsBack
    },
    decide(facts, given) {
      const verdict: MaybePromise<Verdict> = limiter.decide(facts, given)
      return isPromiseLike(verdict)
        ? Promise.resolve(verdict).then((settled) => decided(settled, facts))
        : decided(verdict, facts)
    },
    check(key, ruleId, given) {
      const decision = limiter.check(key, ruleId, given)
      const seen = (settled: Awaited<typeof decision>) => {
        if (settled.storeFailed !== true && countsRules) {
          ruleEventsOf(settled.allowed, [settled], concurrencyRules, emit)
        }
        return settled
      }
      return isPromiseLike(decision) ? Promise.resolve(decision).then(seen) : seen(decision)
    },
    acquire(facts, given) {
      // Decided here, so that the decision is observed; then waited out, observed too.
      return Promise.resolve()
        .then(() => observed.decide(facts, given))
        .then((verdict) => observed.hold(verdict, given))
    },
    hold: (verdict, given) => held.hold(limiter, verdict, given),
    refund: (verdict, given) => limiter.refund(verdict, given),
    release(verdict, given) {
      held.released(verdict)
      return limiter.release?.(verdict, given)
    },
    // Present when the limiter has them (rules that settle); the store call is timed below.
    ...(limiter.settle === undefined
      ? undefined
      : { settle: limiter.settle, cancel: limiter.cancel }),
  }
  if (limiter.update !== undefined) {
    const update = observedUpdate(limiter, rules, emit, (next) => {
      modes = modesOf(next)
      concurrencyRules = concurrencyRulesOf(next)
    })
    Object.defineProperties(observed, {
      update: { value: update, enumerable: true },
      updatesRefused: { get: () => limiter.updatesRefused, enumerable: true },
    })
  }
  // The operator's calls (limiterOperations) reach the inner limiter's store and rules.
  registerOperatorParts(observed, operatorPartsOf(limiter)!)
  return observed
}

/**
 * The validated rules, against the limiter's algorithm table. When they fail, `createLimiter`
 * is given the options, so that whatever it refuses (a bad table) is refused as it says.
 */
function rulesOf(options: ObservedLimiterOptions, limiterOptions: LimiterOptions): readonly Rule[] {
  try {
    return checkRules(options.rules, options.algorithms ?? BUILT_IN_ALGORITHMS, EVERY_READER)
  } catch (error) {
    createLimiter(limiterOptions)
    throw error
  }
}

const modesOf = (rules: readonly Rule[]) =>
  new Map(rules.map((rule) => [rule.id, rule.mode] as const))

const concurrencyRulesOf = (rules: readonly Rule[]) =>
  new Set(rules.filter((rule) => rule.algorithm === 'concurrency').map((rule) => rule.id))

/** Hands the store's own events (a lease store's expiries) to the observers. */
function observeStoreEvents(store: Store, emit: Emit): void {
  const observable = store as Partial<ObservableStore>
  if (typeof observable.observe === 'function') observable.observe((event) => emit(event))
}

function monotonicOf(given: ObservedLimiterOptions['monotonic']): () => number {
  if (given === undefined) return elapsedMs
  checkMethods('monotonic', given, ['now'], '{ now(): number }')
  return () => given.now()
}

function forwardStepOf(given: number | undefined): number {
  if (given === undefined) return DEFAULT_CLOCK_STEP_FORWARD_MS
  return checkWhole('clockStepForwardMs', given, { min: 1, unit: 'ms' })
}

function defaultLogger(logger?: Logger | false): Logger | false {
  if (logger !== undefined) return logger
  const console = (globalThis as { console?: Partial<Logger> }).console
  return typeof console?.warn === 'function' ? (console as Logger) : false
}
