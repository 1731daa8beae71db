import type { SlotQueueParams } from '../algorithms/concurrency.js'
import { costTooHigh } from '../algorithms/params.js'
import { checkCost, checkTime, wholeMs } from '../algorithms/step.js'
import { type AlgorithmTable, BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { type Clock, systemClock } from '../clock.js'
import { RateLimitError } from '../errors.js'
import { FOREIGN_OPTIONS } from '../options/foreign-options.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { checkRules } from '../rules/define-rules.js'
import { memoryStore } from '../store/memory-store.js'
import type { Charge, Outcome, Store } from '../store/types.js'
import type { Scheduler } from '../wait/scheduler.js'
import type { createSlotQueues, SlotQueueHost, SlotQueues } from '../wait/slot-queues.js'
import { admittedCharges } from './admitted-charges.js'
import { type CompiledRule, compileRule } from './compile-rule.js'
import { clockReader, decideAgain, failingEngine, requestDecider } from './decide.js'
import { type ConsumeOne, type Engine, isPromiseLike } from './engine.js'
import { createHold } from './hold.js'
import { checkIdentityNames } from './identity-names.js'
import { LIMITER_OPTIONS } from './option-names.js'
import { createRelease, type RefundOne } from './release.js'
import { createReporter } from './report.js'
import { type RouteMatching, routeMatching } from './route-matching.js'
import { buildRuleIndex } from './rule-index.js'
import { DEFAULT_STORE_TIMEOUT_MS, replyWithin } from './store-deadline.js'
import type {
  Limiter,
  LimiterOptions,
  Logger,
  MaybePromise,
  RuleDecision,
  Verdict,
} from './types.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from './types.js'
import { admission, denial, shown, storeDecision } from './verdict.js'

/**
 * Builds a limiter from rules. Rules are validated here, once (a `RuleValidationError` lists every
 * problem); the store defaults to the bounded memory store and the clock to `Date.now()`.
 * @example
 * const limiter = createLimiter({ rules: defineRules([...]) })
 * const verdict = limiter.decide({ method: 'POST', path: '/v1/login', identities: { ip } })
 */
export function createLimiter<R>(given: LimiterOptions<R>): Limiter {
  // `R` only refuses widened rules at compile time; the rules themselves are checked below.
  const options = given as LimiterOptions
  refuseUnknownOptions(options, LIMITER_OPTIONS, 'createLimiter()', FOREIGN_OPTIONS)
  const algorithms = options.algorithms ?? BUILT_IN_ALGORITHMS
  checkAlgorithms(algorithms)
  const routes = checkRoutesOption(options.routes) ?? routeMatching
  const rules = checkRules(options.rules, algorithms, routes.parseRoute)
  checkIdentityNames(rules, options.customIdentities)
  const compiled = rules.map((rule, index) => compileRule(rule, index, algorithms, routes))
  const byId = new Map(compiled.map((rule) => [rule.id, rule] as const))
  const index = buildRuleIndex(compiled, routes)
  const store = options.store ?? memoryStore()
  const clock = options.clock ?? systemClock
  checkOptions(store, clock, options)
  const consumeOne = (store as { consumeOne?: ConsumeOne }).consumeOne
  const engine: Engine = {
    store,
    consumeOne: typeof consumeOne === 'function' ? consumeOne.bind(store) : undefined,
    reporter: createReporter(options.logger ?? defaultLogger(), options.onError),
    storeErrorRetryAfterMs: options.storeErrorRetryAfterMs ?? DEFAULT_STORE_ERROR_RETRY_AFTER_MS,
    // A store with a budget of its own (Redis) is not timed twice: its budget may be the longer.
    storeTimeoutMs:
      options.storeTimeoutMs ?? (boundsItsCalls(store) ? false : DEFAULT_STORE_TIMEOUT_MS),
  }
  const refunded = new WeakSet<Verdict>()
  const reader = clockReader(options.clock, engine.reporter)

  /**
   * The time of a call: the `now` given (whole ms; a bad one is the caller's bug and throws) or
   * the clock's. A clock that fails is decided like a store that fails: the engine handed back
   * fails every call with the clock's error, so each rule's `onStoreError` decides.
   */
  function timeOf(given: { readonly now?: number } | undefined): [number, Engine] {
    if (given?.now !== undefined) {
      const now = wholeMs(given.now)
      checkTime(now)
      return [now, engine]
    }
    const read = reader.read()
    if (typeof read === 'number') return [read, engine]
    return [reader.latest, failingEngine(engine, read)]
  }

  function ruleOf(id: string): CompiledRule {
    const rule = byId.get(id)
    if (rule === undefined) {
      throw new RateLimitError(
        'ERR_RL_UNKNOWN_RULE',
        `no rule "${id}" (rules: ${[...byId.keys()].join(', ')})`,
        { rule: id },
      )
    }
    return rule
  }

  const queues = slotQueuesOf(compiled, {
    shared: store.shared === true,
    scheduler: () => schedulerOf!(),
    decideAgain: (verdict) => {
      const [now, deciding] = timeOf(undefined)
      return decideAgain(deciding, verdict, ruleOf, now)
    },
    release: (verdict) => limiter.release!(verdict),
  })
  // One scheduler for everything that waits (queued admissions, requests waiting for a slot),
  // from the first rule that waits: a bundle without one holds none of it.
  const makeScheduler = compiled.find((rule) => rule.algorithm.scheduler)?.algorithm.scheduler
  let scheduler: Scheduler | undefined
  const schedulerOf =
    makeScheduler && (() => (scheduler ??= makeScheduler({ clock, timers: options.timers })))
  const holdQueued = createHold(schedulerOf, (verdict) => {
    // Never served: what it was charged goes back, and the concurrency slots it holds.
    const refunding = limiter.refund(verdict)
    const releasing = limiter.release!(verdict)
    return isPromiseLike(refunding) || isPromiseLike(releasing)
      ? Promise.all([refunding, releasing]).then(() => undefined)
      : undefined
  })
  const hold: Limiter['hold'] =
    queues === undefined
      ? holdQueued
      : (verdict, given) =>
          verdict.waitsForSlot === true
            ? queues.wait(verdict, given?.signal).then((next) => holdQueued(next, given))
            : holdQueued(verdict, given)

  const refundOne = (store as { refundOne?: RefundOne }).refundOne
  const release = createRelease({
    engine,
    byId,
    timeOf,
    refundCharges,
    refundOne: typeof refundOne === 'function' ? refundOne.bind(store) : undefined,
    queues,
  })

  const limiter: Limiter = {
    rules,
    store,
    get clockStepsBack() {
      return reader.stepsBack
    },
    decide: requestDecider({ engine, index, clock: reader, markWaiting: queues?.mark }),
    acquire(facts, given) {
      // Adopted, so that a throw (a cost that can never fit) rejects rather than escapes.
      return Promise.resolve()
        .then(() => limiter.decide(facts, given))
        .then((verdict) => hold(verdict, given))
    },
    hold,
    check(key, ruleId, given) {
      const rule = ruleOf(ruleId)
      const cost = given?.cost ?? rule.cost
      checkCost(cost)
      if (cost > rule.algorithm.limit) {
        const error = costTooHigh(cost, rule.algorithm.limit)
        throw new RateLimitError(error.code, `rule "${rule.id}": ${error.message.slice(11)}`, {
          rule: rule.id,
          field: 'cost',
        })
      }
      const [now, deciding] = timeOf(given)
      return checkOne(deciding, rule, key, cost, now)
    },
    refund(verdict, given) {
      if (!verdict.allowed || verdict.storeFailed === true || refunded.has(verdict)) return
      // Slots in flight are given back by `release`, whatever the refund policy.
      const charges = admittedCharges(verdict, ruleOf, false)
      if (charges.length === 0) return
      const [now, refunding] = timeOf(given)
      refunded.add(verdict)
      return refundCharges(refunding, charges, verdict.at, now)
    },
    release,
  }
  return limiter
}

/**
 * The lines of requests waiting for a slot, when an enforcing concurrency rule has a `queue`
 * (a shadow rule never refuses, so nothing waits for it).
 */
function slotQueuesOf(
  compiled: readonly CompiledRule[],
  host: Omit<SlotQueueHost, 'lines'>,
): SlotQueues | undefined {
  const lines = new Map<string, SlotQueueParams>()
  let make: typeof createSlotQueues | undefined
  for (const rule of compiled) {
    const { slotQueue, slotQueues } = rule.algorithm
    if (slotQueue === undefined || slotQueues === undefined || rule.shadow) continue
    lines.set(rule.id, slotQueue)
    make = slotQueues
  }
  return make === undefined ? undefined : make({ ...host, lines })
}

function checkOne(
  engine: Engine,
  rule: CompiledRule,
  key: string,
  cost: number,
  now: number,
): MaybePromise<RuleDecision> {
  const failed = (error: unknown): RuleDecision => {
    const closed = !rule.shadow && rule.failClosed
    engine.reporter.storeError(error, {
      operation: 'consume',
      rules: [rule.id],
      failClosed: closed,
    })
    return closed
      ? denial(rule, cost, key, engine.storeErrorRetryAfterMs)
      : admission(rule, cost, key)
  }
  // A reply is read and checked inside a try: a bad one follows the rule's onStoreError, as in
  // `decide`, rather than failing later on the response path.
  const settle = (outcome: Outcome): RuleDecision => {
    try {
      return storeDecision(rule, outcome?.decisions?.[0], cost, key)
    } catch (error) {
      return failed(error)
    }
  }
  try {
    if (engine.consumeOne !== undefined) {
      return storeDecision(
        rule,
        engine.consumeOne(rule.id, rule.algorithm, key, cost, now),
        cost,
        key,
      )
    }
    const result = engine.store.consume(
      [{ rule: rule.id, algorithm: rule.algorithm, key, cost, shadow: rule.shadow }],
      now,
    )
    return isPromiseLike(result)
      ? replyWithin(result, engine.storeTimeoutMs, 'consume').then(settle, failed)
      : settle(result)
  } catch (error) {
    return failed(error)
  }
}

function refundCharges(
  engine: Engine,
  charges: readonly Charge[],
  chargedAt: number,
  now: number,
): MaybePromise<void> {
  const failed = (error: unknown) =>
    engine.reporter.storeError(error, {
      operation: 'refund',
      rules: charges.map((charge) => charge.rule),
      failClosed: false,
    })
  try {
    const result = engine.store.refund(charges, chargedAt, now)
    // Inside the try: adopting a reply reads its `then` (or a promise's `constructor`), which
    // can throw.
    if (isPromiseLike(result)) {
      return replyWithin(result, engine.storeTimeoutMs, 'refund').then(() => undefined, failed)
    }
  } catch (error) {
    failed(error)
  }
}

/** A budget of its own that will end: 0, NaN or Infinity (for "none") leaves the limiter's. */
function boundsItsCalls(store: Store): boolean {
  const budget = store.timeoutMs
  return typeof budget === 'number' && Number.isFinite(budget) && budget > 0
}

/** `globalThis.console` where there is one (every runtime we know), else nothing. */
function defaultLogger(): Logger | false {
  const console = (globalThis as { console?: Partial<Logger> }).console
  return typeof console?.warn === 'function' ? (console as Logger) : false
}

function checkAlgorithms(
  algorithms: AlgorithmTable | undefined,
): asserts algorithms is AlgorithmTable {
  if (typeof algorithms === 'object' && algorithms !== null) return
  throw new RateLimitError(
    'ERR_RL_INVALID_RULE',
    `algorithms: expected the algorithms rules may name, e.g. { token_bucket: tokenBucket }, got ${shown(algorithms)}`,
    { field: 'algorithms' },
  )
}

/** The `routes` option, refused at start-up unless it is `routeMatching` (or absent). */
function checkRoutesOption(routes: RouteMatching | undefined): RouteMatching | undefined {
  if (routes === undefined || typeof routes?.targets === 'function') return routes
  throw new RateLimitError('ERR_RL_INVALID_RULE', 'routes: expected routeMatching', {
    field: 'routes',
  })
}

function checkOptions(store: Store, clock: Clock, options: LimiterOptions): void {
  const invalid = (field: string, message: string) =>
    new RateLimitError('ERR_RL_INVALID_RULE', `${field}: ${message}`, { field })
  if (typeof store?.consume !== 'function' || typeof store.refund !== 'function') {
    throw invalid('store', 'expected a Store (with consume and refund)')
  }
  if (typeof clock?.now !== 'function') throw invalid('clock', 'expected { now(): number }')
  const timers = options.timers
  if (
    timers !== undefined &&
    (typeof timers?.setTimeout !== 'function' || typeof timers.clearTimeout !== 'function')
  ) {
    throw invalid('timers', 'expected { setTimeout(callback, ms), clearTimeout(handle) }')
  }
  const retry = options.storeErrorRetryAfterMs
  if (retry !== undefined && (!Number.isSafeInteger(retry) || retry < 1)) {
    throw invalid('storeErrorRetryAfterMs', `expected whole ms ≥ 1, got ${retry}`)
  }
  const timeout = options.storeTimeoutMs
  // Timers take at most 2^31 − 1 ms; beyond that they fire at once.
  const validTimeout =
    typeof timeout === 'number' &&
    Number.isSafeInteger(timeout) &&
    timeout >= 1 &&
    timeout < 2 ** 31
  if (timeout !== undefined && timeout !== false && !validTimeout) {
    throw invalid(
      'storeTimeoutMs',
      `expected whole ms from 1 to 2147483647, or false, got ${shown(timeout)}`,
    )
  }
  const logger = options.logger
  if (logger !== undefined && logger !== false && typeof logger?.warn !== 'function') {
    throw invalid('logger', 'expected { warn(message: string): void }')
  }
}
