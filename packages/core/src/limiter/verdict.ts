import { MAX_FIELD_INTEGER } from '../algorithms/integer.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { shown } from '../options/option-values.js'
import type { CompiledRule } from './compile-rule.js'
import type { DenyReason, RuleDecision, Verdict } from './types.js'

/** No decisions: shared by every verdict and request that has none, never written. */
export const NONE: readonly RuleDecision[] = /* @__PURE__ */ Object.freeze([])

/**
 * A decision made up without the store, with the figures of a fresh key when allowed, none when
 * denied: a fail-closed denial (`retryAfterMs` set), a missing identity's (no key, no
 * `retryAfterMs`), or a fail-open admission from `check`. The fields of `storeDecision`'s
 * object, in the same order.
 */
export function madeUpDecision(
  rule: CompiledRule,
  allowed: boolean,
  cost: number,
  key?: string,
  retryAfterMs?: number,
): RuleDecision {
  const limit = rule.algorithm.limit
  return {
    allowed,
    remaining: allowed ? limit : 0,
    limit,
    resetAfterMs: retryAfterMs ?? 0,
    retryAfterMs,
    delayMs: undefined,
    rule: rule.id,
    mode: rule.mode,
    cost,
    policy: rule.algorithm.policy,
    key,
    storeFailed: allowed || retryAfterMs !== undefined,
  }
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
  // Every field declared here, `slotsReleased` too: marking a release changes no object's shape.
  return {
    allowed,
    reason: allowed ? undefined : reason,
    decisions,
    deciding: denying ?? tightest,
    shadowDenied: shadowDenied ?? NONE,
    at,
    storeFailed,
    waitMs: allowed && wait > 0 ? wait : undefined,
    slotsReleased: undefined,
  }
}

/**
 * A store's decision for one rule, copied into the limiter's own object and checked. Throws
 * `ERR_RL_STORE_REPLY` unless it has what the verdict and the responder read: they would
 * otherwise fail later, on the response path, as a 500 that no `onStoreError` decides. A few
 * comparisons per decision, written out (this runs for every decision the store makes);
 * nothing more is allocated unless the decision is bad.
 */
export function storeDecision(
  rule: CompiledRule,
  reply: unknown,
  cost: number,
  key: string,
): RuleDecision {
  if (typeof reply !== 'object' || reply === null) refuseStoreDecision(rule.id, reply)
  // Each field read once, in this order (a getter is called once), into locals that are checked.
  const { allowed, remaining, limit, resetAfterMs, retryAfterMs, delayMs } = reply as Decision
  // One object shape for every rule decision: `madeUp` writes the same fields, in this order.
  const d: RuleDecision = {
    allowed,
    remaining,
    limit,
    resetAfterMs,
    retryAfterMs,
    delayMs,
    rule: rule.id,
    mode: rule.mode,
    cost,
    policy: rule.algorithm.policy,
    key,
    storeFailed: false,
  }
  // The first field the responder could not send, tested inline: counts as they are (no NaN,
  // no text, no fraction, not too large), and waits in ms (sent in whole seconds, so any safe
  // whole number fits). Only a denial's wait is read (Retry-After, the RateLimit field's t); a
  // queue rule's admission waits `delayMs`.
  const unusable: keyof Decision | undefined =
    typeof allowed !== 'boolean'
      ? 'allowed'
      : !(Number.isInteger(remaining) && remaining >= 0 && remaining <= MAX_FIELD_INTEGER)
        ? 'remaining'
        : !(Number.isInteger(limit) && limit >= 0 && limit <= MAX_FIELD_INTEGER)
          ? 'limit'
          : !(Number.isSafeInteger(resetAfterMs) && resetAfterMs >= 0)
            ? 'resetAfterMs'
            : !(allowed || (Number.isSafeInteger(retryAfterMs) && retryAfterMs! >= 0))
              ? 'retryAfterMs'
              : delayMs !== undefined && !(Number.isSafeInteger(delayMs) && delayMs >= 0)
                ? 'delayMs'
                : undefined
  if (unusable !== undefined) refuseStoreDecision(d.rule, d[unusable], unusable)
  return d
}

/**
 * Throws `ERR_RL_STORE_REPLY` for `rule`'s decision: not an object (`value`), or with a `field`
 * the responder could not send, the first (what each field takes:
 * docs/reference/error-codes.md).
 */
function refuseStoreDecision(rule: string, value: unknown, field?: keyof Decision): never {
  throw replyError(
    `the store answered ${field === undefined ? '' : `${field} `}${shown(value)} for rule "${rule}", which the limiter cannot use`,
    rule,
    field,
  )
}

/** `ERR_RL_STORE_REPLY`: the store answered something the limiter cannot use. */
export function replyError(message: string, rule?: string, field?: string): RateLimitError {
  return new RateLimitError('ERR_RL_STORE_REPLY', message, { rule, field })
}

/** A bad value for an error message; never throws, whatever the store put there. */
export { shown }
