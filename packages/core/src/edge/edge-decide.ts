import { MAX_FIELD_INTEGER, MAX_TIME_MS } from '../algorithms/integer.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { type Engine, isPromiseLike } from '../limiter/engine.js'
import { UNKNOWN_CLIENT_KEY } from '../limiter/keys.js'
import { replyWithin } from '../limiter/store-deadline.js'
import type { DenyReason, MaybePromise, RuleDecision, Verdict } from '../limiter/types.js'
import type { Charge, Outcome } from '../store/types.js'
import type { EdgeRule } from './edge-rules.js'

/** What the edge entry decides with: the limiter's engine without the single-charge path. */
export type EdgeEngine = Omit<Engine, 'consumeOne'>

/**
 * Decides a request's matching rules (in rule order) as one unit, as `decideRequest` does for
 * rules naming no route: the same verdicts, store-reply checks and fail-open/closed, with the
 * store's general path for every request (a store's single-charge path decides the same). A
 * clock that failed (`clockError`, `now` the latest time read) fails the store call, as the
 * limiter decides it: each rule's onStoreError.
 */
export function edgeDecide(
  engine: EdgeEngine,
  matched: readonly EdgeRule[],
  identities: Readonly<Record<string, string | undefined>>,
  now: number,
  clockError: Error | undefined,
): MaybePromise<Verdict> {
  /** Each matching rule's decision, by its place; a rule charged to the store has none yet. */
  const decided: Array<RuleDecision | undefined> = []
  const charged: number[] = []
  const charges: Charge[] = []
  let refused = false
  matched.forEach((rule, i) => {
    const key = keyOf(rule, identities)
    if (key === undefined) {
      decided[i] = denial(rule, rule.cost, undefined)
      refused ||= !rule.shadow
      return
    }
    if (key === UNKNOWN_CLIENT_KEY) {
      engine.reporter.warnOnce(
        'WARN_SHARED_CLIENT_BUCKET',
        `rule "${rule.id}": requests without an ip identity share one bucket; pass getConnInfo`,
      )
    }
    charged.push(i)
    charges.push({
      rule: rule.id,
      algorithm: rule.algorithm,
      key,
      cost: rule.cost,
      shadow: rule.shadow,
    })
  })
  const present = () => decided.filter((d): d is RuleDecision => d !== undefined)
  if (refused) return combine(present(), now, 'missing-identity')
  if (charges.length === 0) return combine(present(), now)

  function failed(error: unknown): Verdict {
    let closed = false
    charged.forEach((i, j) => {
      const rule = matched[i]!
      const fails = !rule.shadow && rule.failClosed
      closed ||= fails
      // A fail-closed rule denies; the others are left out (no figures to report).
      decided[i] = fails
        ? denial(rule, rule.cost, charges[j]!.key, engine.storeErrorRetryAfterMs)
        : undefined
    })
    engine.reporter.storeError(error, {
      operation: 'consume',
      rules: charges.map((charge) => charge.rule),
      failClosed: closed,
    })
    return combine(present(), now, closed ? 'store-unavailable' : 'limit', true)
  }

  function settle(outcome: Outcome): Verdict {
    let at: number
    // Everything read from the reply is read here, once, and checked: a getter or proxy that
    // throws is caught like a bad figure.
    try {
      const decisions: unknown = outcome?.decisions
      at = outcome.at
      if (
        !Array.isArray(decisions) ||
        decisions.length !== charges.length ||
        !(Number.isSafeInteger(at) && at >= 0 && at <= MAX_TIME_MS)
      ) {
        throw new RateLimitError(
          'ERR_RL_STORE_REPLY',
          `the store answered no decision for each of ${charges.length} charges at a time in ms`,
        )
      }
      charged.forEach((i, j) => {
        decided[i] = storeDecision(matched[i]!, decisions[j], charges[j]!)
      })
    } catch (error) {
      return failed(error)
    }
    return combine(present(), at)
  }

  try {
    if (clockError !== undefined) throw clockError
    const outcome = engine.store.consume(charges, now)
    // Inside the try: adopting a reply reads its `then`, which can throw.
    if (isPromiseLike(outcome)) {
      return replyWithin(outcome, engine.storeTimeoutMs, 'consume').then(settle, failed)
    }
    return settle(outcome)
  } catch (error) {
    return failed(error)
  }
}

/** A count a field can carry; a wait in ms (sent in whole seconds). */
const isCount = (n: unknown) =>
  Number.isInteger(n) && (n as number) >= 0 && (n as number) <= MAX_FIELD_INTEGER
const isWait = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0

/** A store's decision copied into the limiter's own object, or `ERR_RL_STORE_REPLY`. */
function storeDecision(rule: EdgeRule, reply: unknown, charge: Charge): RuleDecision {
  const d =
    typeof reply === 'object' && reply !== null
      ? ruleDecision(rule, reply as Decision, charge.cost, charge.key, false)
      : undefined
  if (
    d === undefined ||
    typeof d.allowed !== 'boolean' ||
    !isCount(d.remaining) ||
    !isCount(d.limit) ||
    !isWait(d.resetAfterMs) ||
    (!d.allowed && !isWait(d.retryAfterMs)) ||
    (d.delayMs !== undefined && !isWait(d.delayMs))
  ) {
    throw new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `the store answered no valid decision for rule "${rule.id}"`,
      { rule: rule.id },
    )
  }
  return d
}

/**
 * `keyOf` (limiter/keys.ts): `name:value` for one identity, `name#length:value` joined by `&`
 * for several; a missing one falls back to the IP (`ip:<ip>`, or the shared `ip:`), or is
 * undefined for a rule that refuses such requests.
 */
function keyOf(rule: EdgeRule, identities: Readonly<Record<string, string | undefined>>) {
  const names = rule.identity
  let key = ''
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!
    const value = identities[name]
    if (value === undefined || value === '') {
      const { ip } = identities
      if (rule.denyMissingIdentity) return undefined
      return ip === undefined || ip === '' ? UNKNOWN_CLIENT_KEY : `ip:${ip}`
    }
    key +=
      names.length === 1
        ? `${name}:${value}`
        : `${i === 0 ? '' : '&'}${name}#${value.length}:${value}`
  }
  return key
}

// The limiter's verdicts (limiter/verdict.ts) for the rules the edge entry takes, none of which
// waits (no queue rule): the same fields, in the same order.

/** A store decision with the rule's name, mode, cost, policy and key. */
function ruleDecision(
  rule: EdgeRule,
  { allowed, remaining, limit, resetAfterMs, retryAfterMs, delayMs }: Decision,
  cost: number,
  key: string | undefined,
  storeFailed: boolean,
): RuleDecision {
  const { id, mode, policy } = rule
  return {
    allowed,
    remaining,
    limit,
    resetAfterMs,
    retryAfterMs,
    delayMs,
    rule: id,
    mode,
    cost,
    policy,
    key,
    storeFailed,
  }
}

/** A made-up denial: the store is down (`retryAfterMs` set) or an identity is missing (not). */
function denial(rule: EdgeRule, cost: number, key: string | undefined, retryAfterMs?: number) {
  const decision = {
    allowed: false,
    remaining: 0,
    limit: rule.algorithm.limit,
    resetAfterMs: retryAfterMs ?? 0,
    retryAfterMs,
  }
  return ruleDecision(rule, decision, cost, key, retryAfterMs !== undefined)
}

/**
 * Denied if any enforcing rule denies; deciding, when denied, the denying enforcing decision
 * with the longest retry, else the enforcing one with the fewest remaining (the first on ties).
 */
function combine(
  decisions: readonly RuleDecision[],
  at: number,
  reason: DenyReason = 'limit',
  storeFailed = false,
): Verdict {
  let denying: RuleDecision | undefined
  let tightest: RuleDecision | undefined
  const shadowDenied: RuleDecision[] = []
  for (const d of decisions) {
    if (d.mode === 'shadow') {
      if (!d.allowed) shadowDenied.push(d)
    } else if (!d.allowed) {
      if (!denying || (d.retryAfterMs ?? 0) > (denying.retryAfterMs ?? 0)) denying = d
    } else if (!tightest || d.remaining < tightest.remaining) tightest = d
  }
  return {
    allowed: !denying,
    reason: denying && reason,
    decisions,
    deciding: denying ?? tightest,
    shadowDenied,
    at,
    storeFailed,
    waitMs: undefined,
    slotsReleased: undefined,
  }
}
