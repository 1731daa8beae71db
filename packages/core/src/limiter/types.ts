import type { QuotaPolicy } from '../algorithms/types.js'
import type { Decision } from '../decision.js'

/**
 * What the limiter needs to know about a request. Adapters build it; nothing here is
 * framework-specific. Identities are already derived and trusted (the client IP resolved
 * through trusted proxies, the API key read from its header, the authenticated user).
 */
export type RequestFacts = {
  /** Upper-case HTTP method, e.g. `POST`. */
  readonly method: string
  /** The request path without the query string, e.g. `/v1/labels:batch`. */
  readonly path: string
  /** The client's plan, when the app knows it (rules may match on it). */
  readonly plan?: string | undefined
  /** Identity name → value, e.g. `{ ip: '203.0.113.7', api_key: 'k_123', user: 'u_9' }`. */
  readonly identities: Readonly<Record<string, string | undefined>>
}

/** A rule's decision, as the adapters need it for headers and logs. */
export type RuleDecision = Decision & {
  /** The rule id. */
  readonly rule: string
  readonly mode: 'enforce' | 'shadow'
  /** The cost this request was charged (or would have been) under this rule. */
  readonly cost: number
  /** The rule's quota policy, for the RateLimit-Policy field. */
  readonly policy: QuotaPolicy
}

/** Why a request was denied. */
export type DenyReason =
  /** An enforcing rule's limit. */
  | 'limit'
  /** The store failed and a fail-closed rule matched. */
  | 'store-unavailable'
  /** A rule keys on an identity the request lacks, and is configured to refuse it. */
  | 'missing-identity'

/** The limiter's answer for a whole request, over every rule that matched it. */
export type Verdict = {
  readonly allowed: boolean
  /** Set when denied. */
  readonly reason: DenyReason | undefined
  /** One decision per matching rule, in rule order (enforcing and shadow). */
  readonly decisions: readonly RuleDecision[]
  /**
   * The most restrictive decision: when denied, the denying enforcing rule with the longest
   * retry; when allowed, the enforcing rule with the fewest remaining. Undefined when no rule
   * matched.
   */
  readonly deciding: RuleDecision | undefined
  /** Shadow rules that would have denied this request (reported, never enforced). */
  readonly shadowDenied: readonly RuleDecision[]
  /** The time (ms since the epoch) the store decided at. */
  readonly at: number
}
