import { greatestCommonDivisor, MAX_FIELD_INTEGER } from '../algorithms/integer.js'
import type { RuleDecision } from '../limiter/types.js'
import { serializeInteger, serializeString } from './structured-fields.js'

/**
 * Everything about a rule that does not change from request to request, serialized once: the
 * policy name, the `RateLimit-Policy` items of each draft, and the prefix of its `RateLimit`
 * item; and, once the rule has refused a request alone, its last 429 body. Kept with the rule's
 * quota policy (`policyFields`, in families.ts).
 */
export type PolicyFields = {
  /** The rule id and limit the fields were built for (the policy gives the rest). */
  readonly rule: string
  readonly limit: number
  /** The policy name as sent: the rule id (non-printable characters percent-encoded). */
  readonly name: string
  /** Current form: `"free-global";q=10;w=1;tollgate-burst=20`. */
  readonly policyItem: string
  /** Current form, before the per-request values: `"free-global";r=`. */
  readonly rateItemPrefix: string
  /** Draft-6/7 policy item: `10;w=1;burst=20`. */
  readonly legacyPolicyItem: string
  /** For the problem detail: `10 per 1 s, bursts of 20`. */
  readonly description: string
  /**
   * The JSON text of the last 429 problem of this rule alone, with its retry seconds: sent
   * again while they are the same (`quotaExceededBody`); undefined before the first.
   */
  quotaBody: readonly [retryAfter: number, body: string] | undefined
}

/**
 * A rule's quota per whole seconds, as the text of the `q` and `w` parameters' values
 * (`100;w=1`): the drafts allow no sub-second windows.
 */
export function quotaPerSeconds(quota: number, windowMs: number): string {
  // Scale both by the smallest factor that makes the window whole seconds (1 for a window of
  // whole seconds): 10 per 100 ms is sent as 100 per 1 s, 1 per 1500 ms as 2 per 3 s. The rate
  // is exact.
  const factor = 1000 / greatestCommonDivisor(windowMs, 1000)
  const exact = quota * factor <= MAX_FIELD_INTEGER
  const q = exact ? quota * factor : quota
  const w = exact ? (windowMs * factor) / 1000 : Math.ceil(windowMs / 1000)
  return `${serializeInteger(q)};w=${serializeInteger(w)}`
}

/**
 * The policy name for a rule id; rule ids are printable ASCII already, this is a safety net:
 * any other character is percent-encoded as UTF-8 (a lone surrogate as U+FFFD).
 */
export function policyName(ruleId: string): string {
  return ruleId.replace(/[^\x20-\x7e]/gu, (char) => {
    try {
      return encodeURIComponent(char)
    } catch {
      return '%EF%BF%BD'
    }
  })
}

/**
 * Serializes a rule's fixed strings from one of its decisions. The parameters' keys are fixed
 * (RFC 9651 keys already); their values are checked as the Integers and Strings they are.
 */
export function buildPolicyFields(decision: RuleDecision): PolicyFields {
  const { quota, windowMs, unit } = decision.policy
  const limit = decision.limit
  const name = policyName(decision.rule)
  const quoted = serializeString(name)
  let policyItem: string
  let legacyPolicyItem: string
  let description: string
  if (unit !== undefined) {
    // A limit on requests at once has no window: drafts 8–11 give it the quota unit
    // `concurrent-requests` (§3.1), drafts 6 and 7 the bare quota.
    policyItem = `${quoted};q=${serializeInteger(quota)};qu=${serializeString(unit)}`
    legacyPolicyItem = String(quota)
    description = `${quota} at once`
  } else {
    const rate = quotaPerSeconds(quota, windowMs)
    // A rate rule's burst differs from its sustained quota; window rules have limit === quota.
    // Drafts 8–11 (§3.1) want extension parameters under a vendor prefix (`tollgate-burst`);
    // drafts 6 and 7 show a bare `burst` in their own example (draft-07 §2.3).
    const burst = limit === quota ? undefined : serializeInteger(limit)
    policyItem = `${quoted};q=${rate}${burst === undefined ? '' : `;tollgate-burst=${burst}`}`
    legacyPolicyItem = rate + (burst === undefined ? '' : `;burst=${burst}`)
    const per = windowMs % 1000 === 0 ? `${windowMs / 1000} s` : `${windowMs} ms`
    description = `${quota} per ${per}${burst === undefined ? '' : `, bursts of ${burst}`}`
  }
  return {
    rule: decision.rule,
    limit,
    name,
    policyItem,
    rateItemPrefix: `${quoted};r=`,
    legacyPolicyItem,
    description,
    // Declared from the start: the fields keep one shape, read on every request.
    quotaBody: undefined,
  }
}
