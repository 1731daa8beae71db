import { isRateLimitError } from '../errors.js'
import {
  createPolicyFieldCache,
  type FamilyOptions,
  familiesFor,
  fieldWriter,
  type HeaderConfig,
  type HeaderFamily,
  headerNames,
  type LegacyReset,
  type PartitionKeyOf,
  rateLimitHeaders,
  retryAfterSeconds,
  STANDARD_HEADERS,
  type StandardHeaders,
  type WriteVerdictFields,
} from '../headers/families.js'
import { createPartitionKeyHasher, type PartitionKeyHasher } from '../headers/partition-key.js'
import { policyName } from '../headers/policy-fields.js'
import type { HeaderEntries } from '../headers/types.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from '../limiter/types.js'
import { checkBoolean, checkOneOf, invalidOption, shown } from '../options/option-values.js'
import {
  costExceedsCapacityProblem,
  createQuotaExceededBodies,
  denyListedProblem,
  missingIdentityProblem,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  penaltyForbiddenProblem,
  storeUnavailableProblem,
} from './problem.js'

/** The status for a request that lacks the identity a rule keys on and is configured to refuse. */
export type MissingIdentityResponse =
  | { readonly status: 400 | 403 }
  /** 401 must name an authentication scheme (RFC 9110 §15.5.2), which only the app knows. */
  | { readonly status: 401; readonly wwwAuthenticate: string }

/** What to send; every option has a default, so `createResponder()` is a complete setup. */
export type ResponderOptions = {
  /**
   * Send `X-RateLimit-Limit`, `-Remaining` and `-Reset` as well (the de facto GitHub fields), for
   * clients that read only those. Off by default: the IETF fields say the same in two. @default false
   */
  readonly legacyHeaders?: boolean | undefined
  /**
   * `X-RateLimit-Reset` as the epoch second the quota is full again (GitHub), or as seconds
   * from now (Twitter-style clients). @default 'epoch-seconds'
   */
  readonly legacyReset?: LegacyReset | undefined
  /**
   * Which IETF RateLimit fields to send, or `false` for none. Pick an older draft only for
   * clients that parse it; `'draft-12'` for clients that read its `a`, `w` and `c`.
   * @default 'draft-11'
   */
  readonly standardHeaders?: StandardHeaders | false | undefined
  /** List shadow-mode rules in `RateLimit`/`RateLimit-Policy` too (they never deny). @default false */
  readonly shadowPolicies?: boolean | undefined
  /**
   * Add `pk` (a hash of the rule's key) to the current-form fields: `true` hashes each
   * decision's `key` (the limiter's, e.g. `api_key:k_123`), a function picks the text to hash.
   * Hashed synchronously on every runtime, as the fields are written. @default false
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

/**
 * A denial, as the responder built it: status, headers (Tollgate's fields, `Retry-After`, the
 * problem body's `Content-Type`) and the problem body, as JSON text and as an object. What an
 * adapter hands the app's `onLimited`.
 */
export type Denial = Extract<LimitResponse, { allowed: false }>

/** The compiled responder: per-request functions only. */
export type Responder = {
  /**
   * Headers, and for a denial status and body, for a verdict. Synchronous, `pk` included.
   * `now` (ms since the epoch) only places `X-RateLimit-Reset` in epoch seconds; `verdict.at`,
   * the time the store decided at, is the natural value.
   */
  readonly respond: (verdict: Verdict, now: number) => LimitResponse
  /**
   * Writes the fields of an admitted verdict one by one: the entries of
   * `respond(verdict, at).headers`, in order, without building them, where `at` is when the
   * request is served (`verdict.at`, or a queued one's slot, `at + waitMs`).
   */
  readonly writeFields: WriteVerdictFields
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
  return composeResponder(options, EVERY_PART)
}

/** What `createResponder` and `rateLimit` are made with: every family, and SHA-256. */
const EVERY_PART: ResponderParts = {
  partitionKeys: createPartitionKeyHasher,
  families: familiesFor,
}

/** What a responder is made with: the families of fields it may send, the partition-key hasher. */
export type ResponderParts = {
  /**
   * The families the header options turn on: `familiesFor` (of every family), or, for a
   * composed middleware, of those it was given, refusing an option that asks for another.
   */
  readonly families: (options: FamilyOptions) => readonly HeaderFamily[]
  /**
   * Made only when `partitionKey` is on (a middleware composed without one passes a refusal),
   * so that a bundle without it holds no SHA-256.
   */
  readonly partitionKeys: () => PartitionKeyHasher
}

/** `createResponder` made of the parts given (see `ResponderParts`). */
export function composeResponder(options: ResponderOptions, parts: ResponderParts): Responder {
  const fields = {
    legacyHeaders: checkBoolean('legacyHeaders', options.legacyHeaders ?? false),
    legacyReset: checkOneOf('legacyReset', options.legacyReset ?? 'epoch-seconds', LEGACY_RESETS),
    standardHeaders: checkOneOf(
      'standardHeaders',
      options.standardHeaders ?? 'draft-11',
      STANDARD_HEADERS,
    ),
  }
  const config: HeaderConfig = {
    ...fields,
    families: parts.families(fields),
    shadowPolicies: checkBoolean('shadowPolicies', options.shadowPolicies ?? false),
    policyFields: createPolicyFieldCache(),
    epochReset: { second: Number.NaN, text: '' },
  }
  const names = headerNames(config)
  const expose = checkBoolean('exposeHeaders', options.exposeHeaders ?? false)
    ? (['Access-Control-Expose-Headers', names.join(', ')] as const)
    : undefined
  const missing = checkMissingIdentity(options.missingIdentity ?? { status: 400 })
  const keyOf = partitionKeySource(options.partitionKey)
  if (keyOf !== undefined && !config.families.some((family) => family.partitionKeys)) {
    // A partition key nothing sends would be hashed on every request for no field.
    throw invalidOption(
      'partitionKey',
      "no field sends it: standardHeaders 'draft-8' or later does",
    )
  }
  // Each `pk` is hashed as the fields ask for it, while they are written.
  let partitionKeyOf: PartitionKeyOf | undefined
  if (keyOf !== undefined) {
    const hash = parts.partitionKeys()
    partitionKeyOf = (decision) => {
      const key = partitionKeyText(keyOf(decision))
      return key === undefined ? undefined : hash(key)
    }
  }
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

  function respondWith(verdict: Verdict, now: number): LimitResponse {
    const headers = rateLimitHeaders(verdict, now, config, partitionKeyOf)
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
    if (verdict.reason === 'deny-list') return refuse(403, headers, denyListedProblem())
    const violated = verdict.decisions.filter((d) => d.mode === 'enforce' && !d.allowed)
    if (violated.length === 0 && verdict.deciding !== undefined) violated.push(verdict.deciding)
    const retryMs =
      verdict.deciding?.retryAfterMs ?? Math.max(0, ...violated.map((d) => d.retryAfterMs ?? 0))
    const retryAfter = retryAfterSeconds(retryMs)
    headers.push(['Retry-After', String(retryAfter)])
    if (verdict.reason === 'forbidden') {
      const names = violated.map((d) => config.policyFields(d).name)
      return refuse(403, headers, penaltyForbiddenProblem(names, retryAfter))
    }
    const { problem, body } = quotaExceeded(violated.map(config.policyFields), retryAfter)
    return refuse(429, headers, problem, body)
  }

  return {
    headerNames: names,
    respond: respondWith,
    writeFields: fieldWriter(config, partitionKeyOf, expose),
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

function checkMissingIdentity(value: MissingIdentityResponse): MissingIdentityResponse {
  const ok =
    value.status === 400 ||
    value.status === 403 ||
    (value.status === 401 && isFieldValue(value.wwwAuthenticate))
  if (ok) return value
  throw invalidOption(
    'missingIdentity',
    value.status === 401 &&
      typeof value.wwwAuthenticate === 'string' &&
      value.wwwAuthenticate !== ''
      ? `wwwAuthenticate ${shown(value.wwwAuthenticate)} cannot be sent as a header value (printable characters, no line breaks, no surrounding spaces)`
      : 'expected { status: 400 }, { status: 403 } or { status: 401, wwwAuthenticate: "<scheme>" }',
  )
}

/**
 * A header value every adapter sends as given (RFC 9110 field-value): tabs, printable ASCII and
 * U+0080–U+00FF, no surrounding whitespace. Node refuses anything else (CR, LF, `✓`) on every
 * response, which would be a 500, and fetch's `Headers` trims what Node sends as it is.
 */
function isFieldValue(value: unknown): boolean {
  if (typeof value !== 'string' || value === '') return false
  const last = value.length - 1
  for (let i = 0; i <= last; i++) {
    const c = value.charCodeAt(i)
    const blank = c === 0x20 || c === 0x09
    if (c > 0xff || c === 0x7f || (c < 0x20 && c !== 0x09) || (blank && (i === 0 || i === last))) {
      return false
    }
  }
  return true
}

/**
 * The text a partition key is hashed from: a number as text; `null`, an object or '' would all
 * hash to one `pk` shared by every client, so they give none.
 */
function partitionKeyText(given: unknown): string | undefined {
  const key = typeof given === 'number' ? String(given) : given
  return typeof key === 'string' && key !== '' ? key : undefined
}

function partitionKeySource(
  option: ResponderOptions['partitionKey'],
): ((decision: RuleDecision) => string | undefined) | undefined {
  const value = option ?? false
  if (value === false) return undefined
  if (value === true) return (decision) => decision.key
  if (typeof value === 'function') return value
  throw invalidOption('partitionKey', `expected true, false or a function, got ${shown(value)}`)
}
