import type { RuleDecision, Verdict } from '../limiter/types.js'
import type { PolicyFields } from './policy-fields.js'
import type { FieldWriter } from './types.js'

/**
 * Which IETF RateLimit fields to send (draft-ietf-httpapi-ratelimit-headers):
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`;
 * - `'draft-7'`: `RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`;
 * - `'draft-8'` to `'draft-11'` (one syntax): `RateLimit-Policy: "name";q=…;w=…` and
 *   `RateLimit: "name";r=…;t=…`, one list member per policy.
 */
export type StandardHeaders =
  | 'draft-6'
  | 'draft-7'
  | 'draft-8'
  | 'draft-9'
  | 'draft-10'
  | 'draft-11'

/** How `X-RateLimit-Reset` is written. */
export type LegacyReset = 'epoch-seconds' | 'delta-seconds'

/** The header options after parsing, with the per-rule string cache. */
export type HeaderConfig = {
  readonly legacyHeaders: boolean
  readonly legacyReset: LegacyReset
  readonly standardHeaders: StandardHeaders | false
  readonly shadowPolicies: boolean
  readonly policyFields: (decision: RuleDecision) => PolicyFields
  /** An epoch second as text, for `X-RateLimit-Reset` (`createEpochResetCache`). */
  readonly epochReset: (second: number) => string
  /** The families these options turn on, in the order their fields are sent. */
  readonly families: readonly HeaderFamily[]
}

/** A listed decision's `pk` value (a serialized byte sequence), or undefined for none. */
export type PartitionKeyOf = (decision: RuleDecision) => string | undefined

/**
 * One family of rate-limit fields (`X-RateLimit-*`, draft-6, draft-7, the current draft): one
 * module each, listed in `families/index.ts`, whose table every reader of the families uses:
 * option validation, the field names (`Access-Control-Expose-Headers`), merging with another
 * middleware's fields, and writing them.
 */
export type HeaderFamily = {
  /** The `standardHeaders` values that select it; none for `X-RateLimit-*` (`legacyHeaders`). */
  readonly standardHeaders: readonly StandardHeaders[]
  /** Its fields carry a `pk` parameter when `partitionKey` is on. */
  readonly partitionKeys: boolean
  /** Every field it may send, as written. */
  readonly names: readonly string[]
  /** Its fields that hold one value: set, never appended (`isSingleValuedName`). */
  readonly singleValued: readonly string[]
  /**
   * Its fields whose presence on a response calls for `mergeFields` (lower-case): the
   * single-valued ones, and those whose form differs between drafts.
   */
  readonly merged: readonly string[]
  /**
   * Writes a verdict's fields, in order, and returns how many it wrote; `partitionKeyOf` gives
   * each listed decision's `pk` when partition keys are on.
   */
  readonly write: (
    writer: FieldWriter,
    verdict: Verdict,
    now: number,
    config: HeaderConfig,
    partitionKeyOf: PartitionKeyOf | undefined,
  ) => number
}

/**
 * `X-RateLimit-Reset` values in epoch seconds: every request within one second (and under one
 * window) sends the same value, so its text is made once per second.
 */
export function createEpochResetCache(): (second: number) => string {
  let second = Number.NaN
  let text = ''
  return (next) => {
    if (next !== second) {
      second = next
      text = String(next)
    }
    return text
  }
}

/** `Retry-After` delay-seconds: whole seconds rounded up, at least 1 (0 would invite a retry storm). */
export function retryAfterSeconds(ms: number | undefined): number {
  return Math.max(1, Math.ceil((ms ?? 0) / 1000))
}

/** Seconds until a decision's quota is back: its retry time when denied, else until full. */
export function effectiveWindowSeconds(decision: RuleDecision): number {
  return decision.allowed
    ? Math.max(0, Math.ceil(decision.resetAfterMs / 1000))
    : retryAfterSeconds(decision.retryAfterMs)
}

/**
 * False for the decisions the limiter made up rather than read from the store: a fail-closed
 * denial while the store is down (`storeFailed`), and a missing-identity denial (denied with no
 * retry time). Their figures describe no real quota, so no header reports them.
 */
function isReportable(decision: RuleDecision): boolean {
  return decision.storeFailed !== true && (decision.allowed || decision.retryAfterMs !== undefined)
}

/** True for the decisions that the current-form list shows. */
export function isListed(decision: RuleDecision, shadowPolicies: boolean): boolean {
  return (decision.mode === 'enforce' || shadowPolicies) && isReportable(decision)
}

/** The deciding rule of a verdict, when its figures describe a real quota. */
export function reportableDeciding(verdict: Verdict): RuleDecision | undefined {
  const deciding = verdict.deciding
  return deciding !== undefined && isReportable(deciding) ? deciding : undefined
}
