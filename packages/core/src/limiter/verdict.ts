import type { Decision } from '../decision.js'
import type { CompiledRule } from './compile-rule.js'
import type { DenyReason, RuleDecision, Verdict } from './types.js'

const NONE: readonly RuleDecision[] = /* @__PURE__ */ Object.freeze([])

/** A store decision with the rule's name, mode, cost, policy and key (one object shape). */
export function ruleDecision(
  rule: CompiledRule,
  decision: Decision,
  cost: number,
  key: string | undefined,
  storeFailed: boolean,
): RuleDecision {
  return {
    allowed: decision.allowed,
    remaining: decision.remaining,
    limit: decision.limit,
    resetAfterMs: decision.resetAfterMs,
    retryAfterMs: decision.retryAfterMs,
    delayMs: decision.delayMs,
    rule: rule.id,
    mode: rule.mode,
    cost,
    policy: rule.policy,
    key,
    storeFailed,
  }
}

/** A made-up denial: the store is down (`retryAfterMs` set) or an identity is missing (not set). */
export function denial(
  rule: CompiledRule,
  cost: number,
  key: string | undefined,
  retryAfterMs: number | undefined,
): RuleDecision {
  const decision: Decision = {
    allowed: false,
    remaining: 0,
    limit: rule.algorithm.limit,
    resetAfterMs: retryAfterMs ?? 0,
    retryAfterMs,
  }
  return ruleDecision(rule, decision, cost, key, retryAfterMs !== undefined)
}

/** A made-up admission (fail-open `check`): the figures of a fresh key. */
export function admission(rule: CompiledRule, cost: number, key: string): RuleDecision {
  const limit = rule.algorithm.limit
  const decision: Decision = {
    allowed: true,
    remaining: limit,
    limit,
    resetAfterMs: 0,
    retryAfterMs: undefined,
  }
  return ruleDecision(rule, decision, cost, key, true)
}

export function emptyVerdict(at: number, storeFailed = false): Verdict {
  return verdict(true, undefined, NONE, undefined, NONE, at, storeFailed)
}

/** The verdict of one rule's decision: the common case, without loops. */
export function singleVerdict(decision: RuleDecision, at: number): Verdict {
  const shadow = decision.mode === 'shadow'
  if (decision.allowed) {
    const deciding = shadow ? undefined : decision
    const wait = shadow ? undefined : decision.delayMs || undefined
    return verdict(true, undefined, [decision], deciding, NONE, at, false, wait)
  }
  if (shadow) return verdict(true, undefined, [decision], undefined, [decision], at, false)
  return verdict(false, 'limit', [decision], decision, NONE, at, false)
}

/**
 * Combines decisions (in rule order): denied if any enforcing rule denies. The deciding decision
 * is, when denied, the denying enforcing one with the longest retry, else the enforcing one with
 * the fewest remaining; the first wins ties.
 */
export function combine(
  decisions: readonly RuleDecision[],
  at: number,
  reason: DenyReason = 'limit',
  storeFailed = false,
): Verdict {
  let denying: RuleDecision | undefined
  let tightest: RuleDecision | undefined
  let shadowDenied: RuleDecision[] | undefined
  // A queued request waits for the latest slot among its enforcing queue rules.
  let wait = 0
  for (let i = 0; i < decisions.length; i++) {
    const d = decisions[i]!
    if (d.mode === 'shadow') {
      if (d.allowed) continue
      if (shadowDenied === undefined) shadowDenied = [d]
      else shadowDenied.push(d)
    } else if (!d.allowed) {
      if (denying === undefined || (d.retryAfterMs ?? 0) > (denying.retryAfterMs ?? 0)) denying = d
    } else {
      if (tightest === undefined || d.remaining < tightest.remaining) tightest = d
      if (d.delayMs !== undefined && d.delayMs > wait) wait = d.delayMs
    }
  }
  const allowed = denying === undefined
  return verdict(
    allowed,
    allowed ? undefined : reason,
    decisions,
    denying ?? tightest,
    shadowDenied ?? NONE,
    at,
    storeFailed,
    allowed && wait > 0 ? wait : undefined,
  )
}

function verdict(
  allowed: boolean,
  reason: DenyReason | undefined,
  decisions: readonly RuleDecision[],
  deciding: RuleDecision | undefined,
  shadowDenied: readonly RuleDecision[],
  at: number,
  storeFailed: boolean,
  waitMs: number | undefined = undefined,
): Verdict {
  // Every field declared here, `slotsReleased` too: marking a release changes no object's shape.
  return {
    allowed,
    reason,
    decisions,
    deciding,
    shadowDenied,
    at,
    storeFailed,
    waitMs,
    slotsReleased: undefined,
  }
}
