import { greatestCommonDivisor, MAX_FIELD_INTEGER } from '../algorithms/integer.js'
import type { RuleDecision } from '../limiter/types.js'
import { serializeParameters, serializeString } from './structured-fields.js'

/**
 * Everything about a rule that does not change from request to request, serialized once: the
 * policy name, the `RateLimit-Policy` items of each draft, and the prefix of its `RateLimit`
 * item. Keyed by rule id and checked against the decision's figures, so a rule whose quota
 * changes (a dynamic plan) gets fresh strings.
 */
export type PolicyFields = {
  /** The rule id the fields were built for. */
  readonly rule: string
  readonly quota: number
  readonly windowMs: number
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
  /** `X-RateLimit-Limit` of this rule, made once. */
  readonly limitText: string
}

/** A rule's quota per whole seconds: the drafts allow no sub-second windows. */
export function quotaPerSeconds(quota: number, windowMs: number): { q: number; w: number } {
  if (windowMs % 1000 === 0) return { q: quota, w: windowMs / 1000 }
  // Scale both by the smallest factor that makes the window whole seconds: 10 per 100 ms is
  // sent as 100 per 1 s, 1 per 1500 ms as 2 per 3 s. The rate is exact.
  const factor = 1000 / greatestCommonDivisor(windowMs, 1000)
  if (quota * factor <= MAX_FIELD_INTEGER)
    return { q: quota * factor, w: (windowMs * factor) / 1000 }
  return { q: quota, w: Math.ceil(windowMs / 1000) }
}

/** The policy name for a rule id; rule ids are printable ASCII already, this is a safety net. */
export function policyName(ruleId: string): string {
  let name = ''
  for (const char of ruleId) {
    const c = char.charCodeAt(0)
    name += c >= 0x20 && c <= 0x7e && char.length === 1 ? char : utf8Percent(char)
  }
  return name
}

function utf8Percent(char: string): string {
  try {
    return encodeURIComponent(char)
  } catch {
    return '%EF%BF%BD' // a lone surrogate: U+FFFD
  }
}

function describeWindow(windowMs: number): string {
  return windowMs % 1000 === 0 ? `${windowMs / 1000} s` : `${windowMs} ms`
}

/** The current form's burst parameter, with Tollgate's vendor prefix. */
const BURST_PARAMETER = 'tollgate-burst'

/** Serializes a rule's fixed strings from one of its decisions. */
export function buildPolicyFields(decision: RuleDecision): PolicyFields {
  const { quota, windowMs, unit } = decision.policy
  const name = policyName(decision.rule)
  const fixed = {
    rule: decision.rule,
    quota,
    windowMs,
    limit: decision.limit,
    name,
    rateItemPrefix: `${serializeString(name)};r=`,
    limitText: String(decision.limit),
  }
  // A limit on requests at once has no window: drafts 8–11 give it the quota unit
  // `concurrent-requests` (§3.1), drafts 6 and 7 the bare quota.
  if (unit !== undefined) {
    return {
      ...fixed,
      policyItem:
        serializeString(name) +
        serializeParameters([
          ['q', quota],
          ['qu', unit],
        ]),
      legacyPolicyItem: String(quota),
      description: `${quota} at once`,
    }
  }
  const { q, w } = quotaPerSeconds(quota, windowMs)
  // A rate rule's burst differs from its sustained quota; window rules have limit === quota.
  // Drafts 8–11 (§3.1) want extension parameters under a vendor prefix; drafts 6 and 7 show a
  // bare `burst` in their own example (draft-07 §2.3).
  const bursts = decision.limit !== quota
  const burst = (key: string): Array<readonly [string, number]> =>
    bursts ? [[key, decision.limit]] : []
  const params = serializeParameters([['q', q], ['w', w], ...burst(BURST_PARAMETER)])
  const legacyParams = serializeParameters([['w', w], ...burst('burst')])
  const burstText = bursts ? `, bursts of ${decision.limit}` : ''
  return {
    ...fixed,
    policyItem: serializeString(name) + params,
    legacyPolicyItem: String(q) + legacyParams,
    description: `${quota} per ${describeWindow(windowMs)}${burstText}`,
  }
}
