import { isRateLimitError, RateLimitError } from '../errors.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from '../limiter/create-limiter.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { createPartitionKeyHasher } from './partition-key.js'
import { createPolicyFieldCache, policyName } from './policy-fields.js'
import {
  costExceedsCapacityProblem,
  createQuotaExceededBodies,
  missingIdentityProblem,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  storeUnavailableProblem,
} from './problem.js'
import {
  createEpochResetCache,
  type HeaderConfig,
  headerNames,
  isListed,
  type LegacyReset,
  rateLimitHeaders,
  retryAfterSeconds,
  type StandardHeaders,
  writeRateLimitFields,
} from './rate-limit-headers.js'
import type { FieldWriter, HeaderEntries } from './types.js'

/** The status for a request that lacks the identity a rule keys on and is configured to refuse. */
export type MissingIdentityResponse =
  | { readonly status: 400 | 403 }
  /** 401 must name an authentication scheme (RFC 9110 §15.5.2), which only the app knows. */
  | { readonly status: 401; readonly wwwAuthenticate: string }

/** What to send; every option has a default, so `createResponder()` is a complete setup. */
export type ResponderOptions = {
  /** Send `X-RateLimit-Limit`, `-Remaining` and `-Reset` (the de facto GitHub headers). @default true */
  readonly legacyHeaders?: boolean | undefined
  /**
   * `X-RateLimit-Reset` as the epoch second the quota is full again (GitHub), or as seconds
   * from now (Twitter-style clients). @default 'epoch-seconds'
   */
  readonly legacyReset?: LegacyReset | undefined
  /**
   * Which IETF RateLimit fields to send, or `false` for none. Pick an older draft only for
   * clients that parse it. @default 'draft-11'
   */
  readonly standardHeaders?: StandardHeaders | false | undefined
  /** List shadow-mode rules in `RateLimit`/`RateLimit-Policy` too (they never deny). @default false */
  readonly shadowPolicies?: boolean | undefined
  /**
   * Add `pk` (a hash of the rule's key) to the current-form fields: `true` hashes each
   * decision's `key` (the limiter's, e.g. `api_key:k_123`), a function picks the text to hash.
   * Only `respondAsync` adds it, since Web Crypto is asynchronous. @default false
   */
  readonly partitionKey?: boolean | ((decision: RuleDecision) => string | undefined) | undefined
  /** Add `Access-Control-Expose-Headers` so browser code can read the fields. @default false */
  readonly exposeHeaders?: boolean | undefined
  /** @default { status: 400 } */
  readonly missingIdentity?: MissingIdentityResponse | undefined
}

/** What an adapter copies onto its response. Entries are appended in order. */
export type LimitResponse =
  | {
      readonly allowed: true
      readonly status: undefined
      readonly headers: HeaderEntries
      readonly body: undefined
      readonly problem: undefined
    }
  | {
      readonly allowed: false
      readonly status: number
      readonly headers: HeaderEntries
      /** `problem` as JSON text; the headers carry `Content-Type: application/problem+json`. */
      readonly body: string
      readonly problem: ProblemDetails
    }

/** The compiled responder: per-request functions only. */
export type Responder = {
  /**
   * Headers, and for a denial status and body, for a verdict. Synchronous; never adds `pk`.
   * `now` (ms since the epoch) only places `X-RateLimit-Reset` in epoch seconds; `verdict.at`,
   * the time the store decided at, is the natural value.
   */
  readonly respond: (verdict: Verdict, now: number) => LimitResponse
  /**
   * Writes the fields of an admitted verdict one by one: the entries of
   * `respond(verdict, now).headers`, in order, without building them. Never adds `pk`.
   */
  readonly writeFields: (verdict: Verdict, now: number, writer: FieldWriter) => void
  /** As `respond`, with `pk` parameters when `partitionKey` is configured. */
  readonly respondAsync: (verdict: Verdict, now: number) => Promise<LimitResponse>
  /** True when `respondAsync` adds something `respond` cannot; adapters pick the method once. */
  readonly usesPartitionKeys: boolean
  /**
   * The response for an error the limiter threw that is the client's to hear about: a 400 for
   * `ERR_RL_COST_EXCEEDS_CAPACITY`, a 503 for `ERR_RL_STORE_UNAVAILABLE`. `undefined` for
   * anything else (a bug or a misconfiguration, which the adapter should rethrow).
   */
  readonly respondToError: (error: unknown) => LimitResponse | undefined
  /** Every header name this responder can send, as listed in `Access-Control-Expose-Headers`. */
  readonly headerNames: readonly string[]
}

/**
 * Parses the header options once and returns the per-request functions.
 * @example
 * const responder = createResponder({ standardHeaders: 'draft-11', exposeHeaders: true })
 * const { headers, status, body } = responder.respond(verdict, Date.now())
 */
export function createResponder(options: ResponderOptions = {}): Responder {
  const config: HeaderConfig = {
    legacyHeaders: options.legacyHeaders ?? true,
    legacyReset: checkOneOf('legacyReset', options.legacyReset ?? 'epoch-seconds', LEGACY_RESETS),
    standardHeaders: checkOneOf(
      'standardHeaders',
      options.standardHeaders ?? 'draft-11',
      STANDARDS,
    ),
    shadowPolicies: options.shadowPolicies ?? false,
    policyFields: createPolicyFieldCache(),
    epochReset: createEpochResetCache(),
  }
  const names = headerNames(config)
  const expose = options.exposeHeaders
    ? (['Access-Control-Expose-Headers', names.join(', ')] as const)
    : undefined
  const missing = checkMissingIdentity(options.missingIdentity ?? { status: 400 })
  const keyOf = partitionKeySource(options.partitionKey)
  const hash = keyOf === undefined ? undefined : createPartitionKeyHasher()
  const quotaExceeded = createQuotaExceededBodies()

  function refuse(
    status: number,
    headers: Array<readonly [string, string]>,
    problem: ProblemDetails,
    body = JSON.stringify(problem),
  ): LimitResponse {
    headers.push(['Content-Type', PROBLEM_CONTENT_TYPE])
    if (expose !== undefined) headers.push(expose)
    return { allowed: false, status, headers, body, problem }
  }

  function storeUnavailable(
    headers: Array<readonly [string, string]>,
    policies: readonly string[],
    retryAfterMs: number | undefined,
  ): LimitResponse {
    const retryAfter = retryAfterSeconds(retryAfterMs ?? DEFAULT_STORE_ERROR_RETRY_AFTER_MS)
    headers.push(['Retry-After', String(retryAfter)])
    return refuse(503, headers, storeUnavailableProblem(policies, retryAfter))
  }

  function respondWith(
    verdict: Verdict,
    now: number,
    pks?: ReadonlyMap<string, string>,
  ): LimitResponse {
    const headers = rateLimitHeaders(verdict, now, config, pks)
    if (verdict.allowed) {
      if (expose !== undefined && headers.length > 0) headers.push(expose)
      return { allowed: true, status: undefined, headers, body: undefined, problem: undefined }
    }
    if (verdict.reason === 'store-unavailable') {
      // The limiter's made-up denials carry its storeErrorRetryAfterMs.
      const failed = verdict.decisions.filter((d) => d.storeFailed === true && !d.allowed)
      return storeUnavailable(
        headers,
        failed.map((d) => config.policyFields(d).name),
        verdict.deciding?.retryAfterMs,
      )
    }
    if (verdict.reason === 'missing-identity') {
      if (missing.status === 401) headers.push(['WWW-Authenticate', missing.wwwAuthenticate])
      return refuse(missing.status, headers, missingIdentityProblem(missing.status))
    }
    const violated = verdict.decisions.filter((d) => d.mode === 'enforce' && !d.allowed)
    if (violated.length === 0 && verdict.deciding !== undefined) violated.push(verdict.deciding)
    const retryMs =
      verdict.deciding?.retryAfterMs ?? Math.max(0, ...violated.map((d) => d.retryAfterMs ?? 0))
    const retryAfter = retryAfterSeconds(retryMs)
    headers.push(['Retry-After', String(retryAfter)])
    const { problem, body } = quotaExceeded(violated.map(config.policyFields), retryAfter)
    return refuse(429, headers, problem, body)
  }

  return {
    headerNames: names,
    usesPartitionKeys: keyOf !== undefined,
    respond: (verdict, now) => respondWith(verdict, now),
    writeFields(verdict, now, writer) {
      const written = writeRateLimitFields(verdict, now, config, writer)
      if (expose !== undefined && written > 0) writer.write(expose[0], expose[1])
    },
    async respondAsync(verdict, now) {
      if (keyOf === undefined || hash === undefined) return respondWith(verdict, now)
      const listed = verdict.decisions.filter((d) => isListed(d, config.shadowPolicies))
      const pks = new Map<string, string>()
      await Promise.all(
        listed.map(async (decision) => {
          const key = keyOf(decision)
          if (key !== undefined) pks.set(decision.rule, await hash(key))
        }),
      )
      return respondWith(verdict, now, pks)
    },
    respondToError(error) {
      if (!isRateLimitError(error)) return undefined
      if (error.code === 'ERR_RL_COST_EXCEEDS_CAPACITY') {
        return refuse(400, [], costExceedsCapacityProblem(error.rule))
      }
      if (error.code === 'ERR_RL_STORE_UNAVAILABLE') {
        return storeUnavailable(
          [],
          error.rule === undefined ? [] : [policyName(error.rule)],
          undefined,
        )
      }
      return undefined
    },
  }
}

const LEGACY_RESETS: readonly LegacyReset[] = ['epoch-seconds', 'delta-seconds']
const STANDARDS: ReadonlyArray<StandardHeaders | false> = [
  false,
  'draft-6',
  'draft-7',
  'draft-8',
  'draft-9',
  'draft-10',
  'draft-11',
]

function checkOneOf<T>(field: string, value: T, allowed: readonly T[]): T {
  if (allowed.includes(value)) return value
  const list = allowed.map((v) => JSON.stringify(v)).join(', ')
  throw new RateLimitError(
    'ERR_RL_INVALID_RULE',
    `${field}: expected one of ${list}, got ${JSON.stringify(value)}`,
    {
      field,
    },
  )
}

function checkMissingIdentity(value: MissingIdentityResponse): MissingIdentityResponse {
  const ok =
    value.status === 400 ||
    value.status === 403 ||
    (value.status === 401 &&
      typeof value.wwwAuthenticate === 'string' &&
      value.wwwAuthenticate !== '')
  if (ok) return value
  throw new RateLimitError(
    'ERR_RL_INVALID_RULE',
    'missingIdentity: expected { status: 400 }, { status: 403 } or { status: 401, wwwAuthenticate: "<scheme>" }',
    { field: 'missingIdentity' },
  )
}

function partitionKeySource(
  option: ResponderOptions['partitionKey'],
): ((decision: RuleDecision) => string | undefined) | undefined {
  if (option === undefined || option === false) return undefined
  if (typeof option === 'function') return option
  return (decision) => decision.key
}
