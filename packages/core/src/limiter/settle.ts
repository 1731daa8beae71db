import { checkCost } from '../algorithms/step.js'
import { RateLimitError } from '../errors.js'
import type { Settlement } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { type Engine, isPromiseLike } from './engine.js'
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

/** What `settle` needs of its limiter. */
export type SettleHost = {
  readonly byId: ReadonlyMap<string, CompiledRule>
  readonly timeOf: (given: SettleOptions | undefined) => [number, Engine]
  /** Verdicts settled, cancelled or refunded: each is closed once, by whichever comes first. */
  readonly closed: WeakSet<Verdict>
}

const NONE: readonly string[] = Object.freeze([])

function result(
  status: SettleStatus,
  settled: readonly string[] = NONE,
  expired: readonly string[] = NONE,
): SettleResult {
  return { status, settled, expired }
}

/** Builds `Limiter.settle` and `Limiter.cancel`. */
export function createSettle(host: SettleHost): Pick<Required<Limiter>, 'settle' | 'cancel'> {
  const { byId, timeOf, closed } = host
  function settle(
    verdict: Verdict,
    actual: number | Readonly<Record<string, number>>,
    given?: SettleOptions,
  ): MaybePromise<SettleResult> {
    const costOf = actualCosts(actual, byId)
    if (!verdict.allowed || verdict.storeFailed === true) return result('none')
    if (closed.has(verdict)) return result('closed')
    const reserved: Settlement[] = []
    const within: number[] = []
    for (const d of verdict.decisions) {
      // A decision the store charged: admitted (a shadow rule that would deny charged nothing).
      if (!d.allowed || d.key === undefined || d.storeFailed === true) continue
      const rule = byId.get(d.rule)
      if (rule?.settleWithinMs === undefined) continue
      const cost = costOf(rule.id)
      if (cost === undefined) continue
      const { id, algorithm, shadow } = rule
      reserved.push({ rule: id, algorithm, key: d.key, cost: d.cost, shadow, actual: cost })
      within.push(rule.settleWithinMs)
    }
    if (reserved.length === 0) return result('none')
    const [now, engine] = timeOf(given)
    closed.add(verdict)
    // A settle too late leaves that rule's estimate: the key may have been charged in ways the
    // settle no longer knows of, and the estimate is what an unsettled reservation counts as.
    const live = reserved.filter((_, i) => now - verdict.at <= within[i]!)
    const expired = reserved.filter((_, i) => now - verdict.at > within[i]!).map((s) => s.rule)
    if (live.length === 0) return result('expired', NONE, expired)
    const settled = live.map((s) => s.rule)
    const failed = (error: unknown): SettleResult => {
      // The estimates stand, as for a process that never settled: nothing to deny any more,
      // whatever the rules' onStoreError.
      engine.reporter.storeError(error, { operation: 'settle', rules: settled, failClosed: false })
      return result('store-failed', NONE, expired)
    }
    try {
      const store = engine.store
      const done = store.settle!(live, verdict.at, now)
      if (isPromiseLike(done)) {
        return replyWithin(done, engine.storeTimeoutMs, 'settle').then(
          () => result('settled', settled, expired),
          failed,
        )
      }
    } catch (error) {
      return failed(error)
    }
    return result('settled', settled, expired)
  }
  return {
    settle,
    cancel: (verdict, given) => settle(verdict, 0, given),
  }
}

/**
 * The actual cost of each rule, from one cost for all or costs by rule id, checked before
 * anything is done: a bad cost or an unknown rule is the caller's bug and throws.
 */
function actualCosts(
  actual: number | Readonly<Record<string, number>>,
  byId: ReadonlyMap<string, CompiledRule>,
): (rule: string) => number | undefined {
  if (typeof actual !== 'object' || actual === null) {
    checkActual(actual, undefined)
    return () => actual
  }
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
  return (rule) => costs.get(rule)
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
