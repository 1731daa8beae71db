import { costTooHigh } from '../algorithms/params.js'
import { checkCost } from '../algorithms/step.js'
import { type AlgorithmTable, BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { RateLimitError } from '../errors.js'
import { FOREIGN_OPTIONS, type ForeignOptions } from '../options/foreign-options.js'
import { checkOptionValues, checkValue } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { checkRules } from '../rules/define-rules.js'
import type { Rule } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { holdSlots } from '../wait/slot-holding.js'
import { defaultLogger } from '../warnings.js'
import type { ListCheck } from './access-lists.js'
import { admittedCharges, chargeOf } from './admitted-charges.js'
import { clientFigures } from './client-figures.js'
import { type CompiledRule, compiledRules } from './compile-rule.js'
import {
  type ClockReader,
  clockReader,
  consumeAll,
  type ReadsClock,
  requestDecider,
} from './decide.js'
import type { ConsumeOne, Engine } from './engine.js'
import { type FallbackPart, localFallback } from './fallback.js'
import { checkIdentityNames } from './identity-names.js'
import { registerOperatorParts } from './operator-parts.js'
import { ALGORITHMS, LIMITER_KINDS, LIMITER_OPTIONS, STORE } from './option-names.js'
import { type PenaltyPart, penalties } from './penalised.js'
import { createReporter } from './report.js'
import { type RouteMatching, routeMatching } from './route-matching.js'
import type { RuleIndex } from './rule-index.js'
import { checkRuleParts } from './rule-set.js'
import { type ReservationPart, reservations } from './settle.js'
import { checkOne, refundCharges } from './store-calls.js'
import { DEFAULT_STORE_TIMEOUT_MS } from './store-deadline.js'
import type { Limiter, LimiterOptions, Verdict } from './types.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from './types.js'
import { rulesUpdater } from './update.js'

/**
 * Builds a limiter from rules. Rules are validated here, once (a `RuleValidationError` lists every
 * problem); the store defaults to the bounded memory store and the clock to `Date.now()`.
 * @example
 * const limiter = createLimiter({ rules: defineRules([...]) })
 * const verdict = limiter.decide({ method: 'POST', path: '/v1/login', identities: { ip } })
 */
export function createLimiter<R>(given: LimiterOptions<R>): Limiter {
  // `R` only refuses widened rules at compile time; the rules themselves are checked below.
  return composeLimiter(given as LimiterOptions, {
    algorithms: BUILT_IN_ALGORITHMS,
    routes: routeMatching,
    store: memoryStore,
    foreignOptions: FOREIGN_OPTIONS,
    penalties,
    reservations,
    update: rulesUpdater,
    figures: clientFigures,
    localFallback,
    clock: clockReader,
    calls: { add: ownerCalls, holdSlots, unknown: unknownRule },
  })
}

/**
 * What a limiter is composed of beyond its options: the algorithms its rules may name (the
 * `algorithms` option, when given, replaces them), how routes are matched, the store made when
 * the options give none, and the other rate limiters' option names to answer. `createLimiter`
 * passes every one; a middleware composed with `createRateLimit` passes only the app's, so that
 * its bundle holds no other.
 */
export type LimiterParts = {
  readonly algorithms: AlgorithmTable
  readonly routes: RouteMatching
  /** Makes the store of a limiter whose options give none. */
  readonly store: () => Store
  /** What is said of other limiters' options: the full entries pass it, composed ones none. */
  readonly foreignOptions?: ForeignOptions | undefined
  /** Penalties (`penalties`), or none: a rule with a `penalty` is then refused. */
  readonly penalties: PenaltyPart | undefined
  /** Reservations (`reservations`), or none: a rule with `settle` is then refused. */
  readonly reservations?: ReservationPart | undefined
  /** Changing the rules while running (`limiter.update`), or none: the limiter then has no `update`. */
  readonly update?: typeof rulesUpdater | undefined
  /** Per-client figures (the `figures` option), or none: the option is then refused. */
  readonly figures?: typeof clientFigures | undefined
  /** Local fallback (`localFallback`), or none: a rule with `onStoreError: 'fallback'` is then refused. */
  readonly localFallback?: FallbackPart | undefined
  /**
   * The time reader: `clockReader`, which reads the `clock` given (else `Date.now()`) and checks
   * each reading, or, in a middleware composed without it, `systemTime` (`Date.now()` read
   * directly; a `clock` refused).
   */
  readonly clock: ReadsClock
  /**
   * Why a rule keyed on `api_key` is refused by a middleware composed without reading API keys
   * (its `apiKeys` part), naming the part; undefined, for every other limiter.
   */
  readonly apiKeysLeftOut?: string | undefined
  /**
   * What only a limiter an app holds needs: `check`, `acquire` and the operator's calls (`add`),
   * and slots given back and waits held whatever its first rules are (`holdSlots`: an update may
   * add a concurrency or queue rule). `createLimiter` passes them; a middleware's own limiter,
   * which no app holds, has none: it has no `check` and `acquire`, and it holds slots only
   * through its rules' algorithms (an update adding such a rule is refused, see
   * `UpdateOptions.releasesSlots`).
   */
  readonly calls?:
    | {
        readonly add: typeof ownerCalls
        readonly holdSlots: typeof holdSlots
        readonly unknown: typeof unknownRule
      }
    | undefined
}

/** `createLimiter` from the parts given, and none other. */
export function composeLimiter(options: LimiterOptions, parts: LimiterParts): Limiter {
  const setup = compileLimiter(options, parts)
  const { rules, store, reader, byId } = setup
  // The time of a call: the `now` given (whole ms; a bad one is the caller's bug and throws) or
  // the clock's, and the engine to make it with (see `ClockReader`).
  const timeOf: TimeOf = (given) => [reader.read(given?.now), reader.engine]
  // Rules an update removed (`retired`, with the update part): verdicts made under them are
  // still refunded and released. A middleware's own limiter is handed only the verdicts it made,
  // whose rules it holds; one an app holds refuses an id it holds no rule for (`calls.unknown`).
  const ruleOf = (id: string) =>
    (byId.get(id) ?? setup.retired?.get(id) ?? parts.calls?.unknown(id, byId)) as CompiledRule
  // Settled, cancelled or refunded: a verdict's charges are given back or corrected once.
  const closed = new WeakSet<Verdict>()
  // `Limiter.refund`: an admission's charges back, once; slots in flight are `release`'s.
  const refund: Limiter['refund'] = (verdict, given) => {
    if (!verdict.allowed || verdict.storeFailed === true || closed.has(verdict)) return
    const charges = admittedCharges(verdict, ruleOf, false)
    if (charges.length === 0) return
    const [now, refunding] = timeOf(given)
    closed.add(verdict)
    return refundCharges(refunding, charges, verdict.at, now)
  }
  // Slots given back and waits held: carried by the rules that need them (concurrency, queues),
  // and by createLimiter's parts (an update may add such a rule to a limiter an app holds).
  const holdSlots =
    parts.calls?.holdSlots ??
    setup.compiled.find((rule) => rule.algorithm.holdSlots)?.algorithm.holdSlots
  const slots = holdSlots?.(
    setup,
    options,
    timeOf,
    ruleOf,
    refund,
    chargeOf,
    consumeAll,
    admittedCharges,
    refundCharges,
  )
  // Per-client figures: built only with that part (a composed middleware without it refuses the
  // option: see kitParts).
  const figures = options.figures && parts.figures?.(options, parts, setup)
  // `check` and `acquire` come with createLimiter's calls (`ownerCalls`): a middleware's own
  // limiter, which no app holds, has neither.
  const limiter = {
    rules,
    store,
    get clockStepsBack() {
      return reader.stepsBack
    },
    decide: requestDecider(setup, slots?.mark, figures?.decide),
    hold: slots?.hold ?? ((verdict) => Promise.resolve(verdict)),
    refund,
    release: slots?.release,
    // With the reservations part, whether or not a rule settles yet: an update may add one.
    ...parts.reservations?.createSettle(setup, timeOf, closed),
  } as Limiter
  figures?.count(limiter)
  parts.calls?.add(limiter, setup, ruleOf, timeOf)
  // Built only with the update part: a middleware composed without it holds none of it.
  parts.update?.(limiter, options, parts, setup, timeOf)
  return limiter
}

/** A limiter's rules, store and engine, every option checked: what its parts are built from. */
export type LimiterSetup = {
  readonly rules: readonly Rule[]
  readonly compiled: readonly CompiledRule[]
  readonly byId: ReadonlyMap<string, CompiledRule>
  /** The rules by method and path, as `decide` reads them: swapped by an update. */
  readonly index: RuleIndex
  /** Rules an update removed (set by the update part), still found by their verdicts. */
  readonly retired?: ReadonlyMap<string, CompiledRule>
  readonly store: Store
  readonly engine: Engine
  readonly reader: ClockReader
  readonly lists: ListCheck | undefined
}

/** The compile step: options checked, rules validated and compiled, the store's engine. */
function compileLimiter(options: LimiterOptions, parts: LimiterParts): LimiterSetup {
  refuseUnknownOptions(options, LIMITER_OPTIONS, 'createLimiter()', parts.foreignOptions)
  const algorithms = options.algorithms ?? parts.algorithms
  checkValue('algorithms', algorithms, ALGORITHMS)
  checkOptionValues(options, LIMITER_KINDS)
  const routes = parts.routes
  const rules = checkRules(options.rules, algorithms, parts)
  const identities = checkIdentityNames(rules, options.customIdentities, parts.apiKeysLeftOut)
  const compiled = compiledRules(rules, algorithms, parts)
  // One made by the parts' store factory (an app's own, perhaps) is checked as a given one is.
  const store = options.store ?? checkValue('store', parts.store(), STORE)
  checkRuleParts(store, compiled, parts)
  const lists = options.lists?.compile(identities)
  const consumeOne = (store as { consumeOne?: ConsumeOne }).consumeOne
  // A budget of its own that will end: 0, NaN or Infinity (for "none") leaves the limiter's.
  const budget = store.timeoutMs
  const engine: Engine = {
    store,
    consumeOne: typeof consumeOne === 'function' ? consumeOne.bind(store) : undefined,
    reporter: createReporter(options.logger ?? defaultLogger(), options.onError),
    storeErrorRetryAfterMs: options.storeErrorRetryAfterMs ?? DEFAULT_STORE_ERROR_RETRY_AFTER_MS,
    // A store with a budget of its own (Redis) is not timed twice: its budget may be the longer.
    storeTimeoutMs:
      options.storeTimeoutMs ??
      (Number.isFinite(budget) && budget! > 0 ? false : DEFAULT_STORE_TIMEOUT_MS),
    penalties: parts.penalties,
    localFallback: parts.localFallback,
  }
  return {
    rules,
    compiled,
    byId: new Map(compiled.map((rule) => [rule.id, rule] as const)),
    index: routes.ruleIndex(compiled),
    store,
    engine,
    reader: parts.clock(options.clock, engine, options.onError !== undefined),
    lists,
  }
}

/** Refuses an id that a limiter an app holds, which may be handed any, holds no rule for. */
function unknownRule(id: string, byId: ReadonlyMap<string, CompiledRule>): never {
  throw new RateLimitError(
    'ERR_RL_UNKNOWN_RULE',
    `no rule "${id}" (rules: ${[...byId.keys()].join(', ')})`,
    { rule: id },
  )
}

/** `check`, `acquire` and the operator's calls (`limiterOperations`), on `limiter`. */
function ownerCalls(
  limiter: Limiter,
  setup: LimiterSetup,
  ruleOf: (id: string) => CompiledRule,
  timeOf: TimeOf,
): void {
  limiter.check = checker(ruleOf, timeOf)
  limiter.acquire = (facts, given) =>
    // Adopted, so that a throw (a cost that can never fit) rejects rather than escapes.
    Promise.resolve()
      .then(() => limiter.decide(facts, given))
      .then((verdict) => limiter.hold(verdict, given))
  registerOperatorParts(limiter, { store: setup.store, ruleOf, reader: setup.reader })
}

/** The time of a call, and the engine to decide it with. */
export type TimeOf = (given: { readonly now?: number } | undefined) => [number, Engine]

/** `Limiter.check`: one rule for one key, the cost checked against the rule first. */
function checker(ruleOf: (id: string) => CompiledRule, timeOf: TimeOf): Limiter['check'] {
  return (key, ruleId, given) => {
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
  }
}
