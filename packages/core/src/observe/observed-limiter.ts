import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { type Clock, systemClock } from '../clock.js'
import { createLimiter } from '../limiter/create-limiter.js'
import { isPromiseLike } from '../limiter/engine.js'
import { createReporter } from '../limiter/report.js'
import { routeMatching } from '../limiter/route-matching.js'
import type {
  Limiter,
  LimiterOptions,
  Logger,
  MaybePromise,
  StoreErrorContext,
  Verdict,
} from '../limiter/types.js'
import { FOREIGN_OPTIONS } from '../options/foreign-options.js'
import { LIMITER_OPTIONS } from '../options/option-names.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { checkRules } from '../rules/define-rules.js'
import type { Rule } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { ObservedLimiterInfo, Observer } from './events.js'
import { checkObservers, type Emit, fanOut } from './fan-out.js'
import { failureEventsOf, ruleEventsOf } from './outcomes.js'
import { reasonOf, storeKindOf, timedStore } from './timed-store.js'

export type ObservedLimiterOptions = LimiterOptions & {
  /**
   * Who is told what the limiter does (`@tollgate/opentelemetry`'s metrics, `shadowReport()`,
   * `explainDecisions()`…), in this order. An empty list is the plain limiter.
   */
  readonly observers: readonly Observer[]
}

/**
 * A limiter that tells `observers` what it does: each request's verdict and each rule's part in
 * it, each store call timed, store failures and clock steps (see `ObservedEvent`). It decides
 * exactly as `createLimiter` with the same options does; the plain limiter pays nothing for
 * this, since none of it is there. Pass it to an adapter in place of the rules.
 * @example
 * const limiter = observedLimiter({ rules, observers: [tollgateMetrics()] })
 * app.use(rateLimit(limiter))
 */
export function observedLimiter(options: ObservedLimiterOptions): Limiter {
  const { observers: given, ...limiterOptions } = options
  refuseUnknownOptions(limiterOptions, LIMITER_OPTIONS, 'observedLimiter()', FOREIGN_OPTIONS)
  const observers = checkObservers(given)
  if (observers.length === 0) return createLimiter(limiterOptions)
  const rules = rulesOf(options, limiterOptions)
  const store = options.store ?? memoryStore()
  // What createLimiter refuses is given to it as it is, so that it is refused the same way.
  const usable = typeof store?.consume === 'function' && typeof store.refund === 'function'
  const clock = options.clock ?? systemClock
  const storeKind = storeKindOf(store)
  const info: ObservedLimiterInfo = {
    rules,
    store,
    storeKind,
  }
  const emit = fanOut(observers, info, defaultLogger(options.logger))
  const modes = new Map(info.rules.map((rule) => [rule.id, rule.mode] as const))
  // The app's onError, else the limiter's own warning (a reporter like the limiter's): what
  // the app sees of a store failure is the same, observed or not.
  const onError =
    options.onError ?? createReporter(defaultLogger(options.logger), undefined).storeError
  const observeError = (error: unknown, context: StoreErrorContext) => {
    emit({ type: 'store.error', ...context, store: storeKind, reason: reasonOf(error) })
    if (context.operation === 'consume') failureEventsOf(context, modes, emit)
    onError(error, context)
  }
  const limiter = createLimiter({
    ...limiterOptions,
    rules,
    store: usable ? timedStore(store, storeKind, emit) : store,
    clock: typeof clock?.now === 'function' ? watchedClock(clock, emit) : clock,
    onError: observeError,
  })

  const decided = (verdict: Verdict, facts: Parameters<Limiter['decide']>[0]) => {
    ruleEventsOf(verdict.allowed, verdict.decisions, emit)
    emit({ type: 'decision', verdict, facts })
    return verdict
  }
  const observed: Limiter = {
    rules: limiter.rules,
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
        if (settled.storeFailed !== true) {
          ruleEventsOf(settled.allowed, [settled], emit)
        }
        return settled
      }
      return isPromiseLike(decision) ? Promise.resolve(decision).then(seen) : seen(decision)
    },
    acquire(facts, given) {
      // Decided here, so that the decision is observed; then waited out by the limiter.
      return Promise.resolve()
        .then(() => observed.decide(facts, given))
        .then((verdict) => limiter.hold(verdict, given))
    },
    hold: (verdict, given) => limiter.hold(verdict, given),
    refund: (verdict, given) => limiter.refund(verdict, given),
    release: (verdict, given) => limiter.release?.(verdict, given),
  }
  return observed
}

/**
 * The validated rules, against the limiter's algorithm table. When they fail, `createLimiter`
 * is given the options, so that whatever it refuses (a bad table) is refused as it says.
 */
function rulesOf(options: ObservedLimiterOptions, limiterOptions: LimiterOptions): readonly Rule[] {
  try {
    const routes = options.routes ?? routeMatching
    return checkRules(options.rules, options.algorithms ?? BUILT_IN_ALGORITHMS, routes.parseRoute)
  } catch (error) {
    createLimiter(limiterOptions)
    throw error
  }
}

/** `clock`, telling `emit` each time it reads earlier than before (in whole ms). */
function watchedClock(clock: Clock, emit: Emit): Clock {
  let latest = Number.NEGATIVE_INFINITY
  return {
    now() {
      const value = clock.now()
      if (typeof value === 'number' && value >= 0) {
        const now = Math.floor(value)
        if (now < latest) emit({ type: 'clock.step', direction: 'backward', ms: latest - now })
        latest = now
      }
      return value
    },
  }
}

function defaultLogger(logger?: Logger | false): Logger | false {
  if (logger !== undefined) return logger
  const console = (globalThis as { console?: Partial<Logger> }).console
  return typeof console?.warn === 'function' ? (console as Logger) : false
}
