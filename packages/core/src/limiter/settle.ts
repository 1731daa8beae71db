import { reservable } from '../algorithms/reservable.js'
import { checkCost } from '../algorithms/step.js'
import { RateLimitError } from '../errors.js'
import { validateSettle } from '../rules/validate-settle.js'
import type { Settlement, Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { type Engine, isPromiseLike } from './engine.js'
import { estimatedCosts } from './estimate.js'
import type { RefuseRules } from './rule-set.js'
import { replyWithin } from './store-deadline.js'
import type {
  Limiter,
  MaybePromise,
  SettleOptions,
  SettleResult,
  SettleStatus,
  Verdict,
} from './types.js'

// Reservations settled: an admission's estimates under its rules with `settle` replaced with
// what the request really cost, in one store call. Reached only through `settle` and `cancel`.

/** The time of a call to `settle`, and the engine to settle it with. */
type SettleTime = (given: SettleOptions | undefined) => [number, Engine]

const NONE: readonly string[] = Object.freeze([])

function result(
  status: SettleStatus,
  settled: readonly string[] = NONE,
  expired: readonly string[] = NONE,
): SettleResult {
  return { status, settled, expired }
}

/**
 * Reservations, for rules with `settle` (charge an estimate before the response, settle the
 * actual cost after it): the limiter's `settle` and `cancel`, and the `estimate` a request
 * reserves. `createLimiter` and `rateLimit` have it; a middleware made by `createRateLimit` has
 * it only when its parts name it, and refuses a rule with `settle` otherwise.
 * @example
 * const rateLimit = createRateLimit({ algorithms: { token_bucket: tokenBucket }, reservations })
 */
export const reservations: ReservationPart = {
  createSettle,
  costs: estimatedCosts,
  checkStore: checkSettlingStore,
  validateSettle,
  reservable,
}

/** The reservations part (`reservations`): how a limiter settles, and reads an estimate. */
export type ReservationPart = {
  /** Builds the limiter's `settle` and `cancel`, for a limiter whose rules settle. */
  readonly createSettle: typeof createSettle
  /** A settling rule's costs, as it is compiled: a request's estimate, else its cost by route. */
  readonly costs: typeof estimatedCosts
  /** Refuses, at start-up, a store that cannot settle (`refuse` names the rules that settle). */
  readonly checkStore: typeof checkSettlingStore
  /** Reads a rule's `settle` while rules are validated. */
  readonly validateSettle: typeof validateSettle
  /** A settling rule's algorithm, as it is compiled. */
  readonly reservable: typeof reservable
}

function checkSettlingStore(store: Store, refuse: RefuseRules): void {
  if (typeof store.settle !== 'function') {
    refuse(
      'store',
      (rule) => rule.settleWithinMs !== undefined,
      'settle their charges (settle), but the store has no settle method',
    )
  }
}

/**
 * Builds `Limiter.settle` and `Limiter.cancel` of a limiter whose rules are looked up in `byId`;
 * `closed` holds the verdicts settled, cancelled or refunded: each is closed once, by whichever
 * comes first.
 */
function createSettle(
  setup: { readonly byId: ReadonlyMap<string, CompiledRule> },
  timeOf: SettleTime,
  closed: WeakSet<Verdict>,
): Pick<Required<Limiter>, 'settle' | 'cancel'> {
  const byId = setup.byId
  function settle(
    verdict: Verdict,
    actual: number | Readonly<Record<string, number>>,
    given?: SettleOptions,
  ): MaybePromise<SettleResult> {
    const costs = typeof actual === 'number' ? undefined : actualCosts(actual, byId)
    if (costs === undefined) checkActual(actual, undefined)
    if (!verdict.allowed || verdict.storeFailed === true) return result('none')
    if (closed.has(verdict)) return result('closed')
    let now = 0
    let engine: Engine | undefined
    const live: Settlement[] = []
    const settled: string[] = []
    let expired: string[] | undefined
    const decisions = verdict.decisions
    for (let i = 0; i < decisions.length; i++) {
      const d = decisions[i]!
      // A decision the store charged: admitted (a shadow rule that would deny charged nothing).
      if (!d.allowed || d.key === undefined || d.storeFailed === true) continue
      const rule = byId.get(d.rule)
      const within = rule?.settleWithinMs
      if (within === undefined) continue
      const cost = costs === undefined ? (actual as number) : costs.get(rule!.id)
      if (cost === undefined) continue
      // The time is read once, at the first reserved rule: none for a verdict without any.
      if (engine === undefined) [now, engine] = timeOf(given)
      // A settle too late leaves that rule's estimate: the key may have been charged in ways
      // the settle no longer knows of, and the estimate is what an unsettled reservation
      // counts as.
      if (now - verdict.at > within) {
        expired = expired === undefined ? [rule!.id] : [...expired, rule!.id]
        continue
      }
      const { id, algorithm, shadow } = rule!
      live.push({ rule: id, algorithm, key: d.key, cost: d.cost, shadow, actual: cost })
      settled.push(id)
    }
    if (engine === undefined) return result('none')
    closed.add(verdict)
    if (live.length === 0) return result('expired', NONE, expired)
    try {
      const store = engine.store
      const done = store.settle!(live, verdict.at, now)
      if (isPromiseLike(done)) {
        const reporting = engine
        return replyWithin(done, engine.storeTimeoutMs, 'settle').then(
          () => result('settled', settled, expired),
          (error: unknown) => storeFailed(reporting, error, settled, expired),
        )
      }
    } catch (error) {
      return storeFailed(engine, error, settled, expired)
    }
    return result('settled', settled, expired)
  }
  return {
    settle,
    cancel: (verdict, given) => settle(verdict, 0, given),
  }
}

/**
 * The store failed: the estimates stand, as for a process that never settled. Nothing is left
 * to deny, whatever the rules' onStoreError; the failure is reported.
 */
function storeFailed(
  engine: Engine,
  error: unknown,
  settled: readonly string[],
  expired: readonly string[] | undefined,
): SettleResult {
  engine.reporter.storeError(error, 'settle', settled)
  return result('store-failed', NONE, expired)
}

/**
 * The actual cost of each rule named, checked before anything is done: a bad cost or an unknown
 * rule is the caller's bug and throws.
 */
function actualCosts(
  actual: Readonly<Record<string, number>>,
  byId: ReadonlyMap<string, CompiledRule>,
): ReadonlyMap<string, number> {
  if (typeof actual !== 'object' || actual === null) checkActual(actual, undefined)
  const costs = new Map<string, number>()
  for (const [id, cost] of Object.entries(actual)) {
    const rule = byId.get(id)
    if (rule === undefined) {
      throw new RateLimitError(
        'ERR_RL_UNKNOWN_RULE',
        `settle: no rule "${id}" (rules: ${[...byId.keys()].join(', ')})`,
        { rule: id },
      )
    }
    if (rule.settleWithinMs === undefined) {
      throw new RateLimitError(
        'ERR_RL_INVALID_OPTION',
        `settle: rule "${id}" has no settle field, so its charge is final`,
        { rule: id, field: 'settle' },
      )
    }
    checkActual(cost, id)
    costs.set(id, cost)
  }
  return costs
}

function checkActual(cost: unknown, rule: string | undefined): void {
  try {
    checkCost(cost as number)
  } catch {
    const where = rule === undefined ? '' : ` for rule "${rule}"`
    throw new RateLimitError(
      'ERR_RL_INVALID_COST',
      `settle: the actual cost${where} must be a whole number ≥ 0, got ${typeof cost === 'number' ? cost : typeof cost}`,
      rule === undefined ? { field: 'actual' } : { rule, field: 'actual' },
    )
  }
}
