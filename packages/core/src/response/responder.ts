import { isRateLimitError } from '../errors.js'
import {
  familiesFor,
  fieldWriter,
  type HeaderConfig,
  type LegacyReset,
  policyFields,
  retryAfterSeconds,
  STANDARD_HEADERS,
  type StandardHeaders,
  type WriteVerdictFields,
  writeFamilies,
} from '../headers/families.js'
import { policyName } from '../headers/policy-fields.js'
import type { HeaderEntries } from '../headers/types.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from '../limiter/types.js'
import {
  BOOLEAN,
  checkOptionValues,
  type OptionKind,
  oneOf,
  orNull,
  shown,
} from '../options/option-values.js'
import { partitionKeys } from './partition-keys.js'
import {
  costExceedsCapacityProblem,
  MISSING_IDENTITY,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  problem,
  quotaExceededBody,
  quotaExceededProblem,
  STORE_UNAVAILABLE,
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
  /**
   * Every header name this responder can send: those `Access-Control-Expose-Headers` lists, then
   * that field itself when it is sent (`exposeHeaders`).
   */
  readonly headerNames: readonly string[]
  /**
   * The fields this responder sends that hold one value: its families' `singleValued` fields,
   * `Retry-After` and `Content-Type`. A denial's are set, never appended (`isSingleValuedName`
   * names those of every family).
   */
  readonly singleValuedNames: readonly string[]
}

/**
 * Parses the header options once and returns the per-request functions.
 * @example
 * const responder = createResponder({ standardHeaders: 'draft-11', exposeHeaders: true })
 * const { headers, status, body } = responder.respond(verdict, Date.now())
 */
export function createResponder(options: ResponderOptions = {}): Responder {
  checkOptionValues(options, { ...RESPONDER_KINDS, missingIdentity: missingIdentityStatus })
  return composeResponder(options, EVERY_PART)
}

/**
 * What each header option's value must be, checked in this order (`checkOptionValues`; a
 * middleware checks them with its other options), then `missingIdentity`'s
 * (`missingIdentityStatus`). Null reads as the default. Typed as a record of the option type's
 * keys: adding an option without its kind does not compile.
 */
export const RESPONDER_KINDS: {
  readonly [K in keyof ResponderOptions]-?: K extends 'missingIdentity' ? 0 : OptionKind
} = {
  legacyHeaders: orNull(BOOLEAN),
  legacyReset: orNull(oneOf(['epoch-seconds', 'delta-seconds'] satisfies LegacyReset[])),
  standardHeaders: orNull(oneOf(STANDARD_HEADERS)),
  shadowPolicies: orNull(BOOLEAN),
  partitionKey: (value) =>
    value === null || typeof value === 'boolean' || typeof value === 'function'
      ? undefined
      : `expected true, false or a function, got ${shown(value)}`,
  exposeHeaders: orNull(BOOLEAN),
  // Checked in this place as a middleware's part says (`missingIdentityStatus` or a refusal).
  missingIdentity: 0,
}

/**
 * What the `missingIdentity` option's value must be (an `OptionKind`): `createResponder` and
 * `rateLimit` check it after the other header options; a middleware made with `createRateLimit`
 * takes the option only with this part (`missingIdentity: missingIdentityStatus`). One message
 * for every wrong value: the value shown says what is wrong with a challenge (a line break, a
 * surrounding space); docs/reference/options.md says what a header value holds.
 */
export const missingIdentityStatus: OptionKind = /* @__PURE__ */ orNull((value) => {
  const { status, wwwAuthenticate } = value as { status?: unknown; wwwAuthenticate?: unknown }
  return status === 400 || status === 403 || (status === 401 && isFieldValue(wwwAuthenticate))
    ? undefined
    : `expected { status: 400 }, { status: 403 } or { status: 401, wwwAuthenticate: "<scheme>" }, got ${shown(value)}`
})

/** What `createResponder` and `rateLimit` are made with: every family, and SHA-256. */
const EVERY_PART: ResponderParts = {
  partitionKeys,
  families: familiesFor,
}

/** What a responder is made with: the families of fields it may send, the partition keys' part. */
export type ResponderParts = {
  /**
   * The families the header options turn on: `familiesFor` (of every family), or, for a
   * composed middleware, of those it was given, refusing an option that asks for another.
   */
  readonly families: typeof familiesFor
  /**
   * `partitionKeys`, called only when `partitionKey` is on (a middleware composed without it
   * passes a refusal), so that a bundle without it holds neither the option's compilation nor
   * SHA-256.
   */
  readonly partitionKeys: typeof partitionKeys
}

/**
 * `createResponder` made of the parts given (see `ResponderParts`), of options already checked
 * (`RESPONDER_KINDS`, `missingIdentityStatus`).
 */
export function composeResponder(options: ResponderOptions, parts: ResponderParts): Responder {
  // The families chosen by two of the options are all the fields need.
  const config: HeaderConfig = {
    legacyReset: options.legacyReset,
    families: parts.families(options.legacyHeaders, options.standardHeaders ?? 'draft-11'),
    shadowPolicies: options.shadowPolicies ?? false,
  }
  // Every header name this configuration can send, for `Access-Control-Expose-Headers`.
  const names = [...config.families.flatMap((family) => family.names), 'Retry-After']
  const expose = options.exposeHeaders
    ? (['Access-Control-Expose-Headers', names.join(', ')] as const)
    : undefined
  const missing = options.missingIdentity ?? { status: 400 }
  // Off unless `true` or a function (the option's values are checked already).
  const partitionKeyOf = options.partitionKey
    ? parts.partitionKeys(options.partitionKey, config.families)
    : undefined

  /**
   * A denial with the problem's status: `Retry-After` when the problem says when to retry, then
   * the problem body's `Content-Type`.
   */
  function refuse(
    headers: Array<readonly [string, string]>,
    details: ProblemDetails,
    body = JSON.stringify(details),
  ): LimitResponse {
    if (details.retryAfter !== undefined) headers.push(['Retry-After', String(details.retryAfter)])
    headers.push(['Content-Type', PROBLEM_CONTENT_TYPE])
    if (expose !== undefined) headers.push(expose)
    return { allowed: false, status: details.status, headers, body, problem: details }
  }

  function respondWith(verdict: Verdict, now: number): LimitResponse {
    const headers: Array<readonly [string, string]> = []
    const writer = { write: (name: string, value: string) => headers.push([name, value]) }
    writeFamilies(writer, verdict, now, config, partitionKeyOf)
    if (verdict.allowed) {
      if (expose !== undefined && headers.length > 0) headers.push(expose)
      return { allowed: true, status: undefined, headers, body: undefined, problem: undefined }
    }
    const { reason, deciding, refusal } = verdict
    const nameOf = (d: RuleDecision) => policyFields(d).name
    if (reason === 'store-unavailable') {
      // The limiter's made-up denials carry its storeErrorRetryAfterMs.
      const failed = verdict.decisions.filter((d) => d.storeFailed === true && !d.allowed)
      return storeUnavailable(headers, failed.map(nameOf), deciding?.retryAfterMs)
    }
    if (reason === 'missing-identity') {
      if (missing.status === 401) headers.push(['WWW-Authenticate', missing.wwwAuthenticate])
      return refuse(headers, problem(missing.status, MISSING_IDENTITY, 'missing-identity'))
    }
    const violated = verdict.decisions.filter((d) => d.mode === 'enforce' && !d.allowed)
    if (violated.length === 0 && deciding !== undefined) violated.push(deciding)
    const retryAfter = retryAfterSeconds(
      deciding?.retryAfterMs ?? Math.max(0, ...violated.map((d) => d.retryAfterMs ?? 0)),
    )
    if (refusal) {
      // A part's own 403 (the deny list, a penalty's forbidAfter): its texts come with the
      // verdict, so that a responder of an app without that part holds none of them.
      return refuse(
        headers,
        problem(
          403,
          refusal.detail,
          refusal.code,
          deciding && retryAfter,
          deciding && violated.map(nameOf),
        ),
      )
    }
    const policies = violated.map(policyFields)
    const details = quotaExceededProblem(policies, retryAfter)
    return refuse(headers, details, quotaExceededBody(policies, retryAfter, details))
  }

  function storeUnavailable(
    headers: Array<readonly [string, string]>,
    policies: readonly string[],
    retryAfterMs = DEFAULT_STORE_ERROR_RETRY_AFTER_MS,
  ): LimitResponse {
    const retryAfter = retryAfterSeconds(retryAfterMs)
    const listed = policies.length === 0 ? undefined : policies
    return refuse(headers, problem(503, STORE_UNAVAILABLE, undefined, retryAfter, listed))
  }

  return {
    headerNames: expose === undefined ? names : [...names, expose[0]],
    singleValuedNames: [
      ...config.families.flatMap((family) => family.singleValued ?? []),
      'Retry-After',
      'Content-Type',
    ],
    respond: respondWith,
    writeFields: fieldWriter(config, partitionKeyOf, expose),
    respondToError(error) {
      if (!isRateLimitError(error)) return undefined
      if (error.code === 'ERR_RL_COST_EXCEEDS_CAPACITY') {
        return refuse([], costExceedsCapacityProblem(error.rule))
      }
      if (error.code === 'ERR_RL_STORE_UNAVAILABLE') {
        return storeUnavailable([], error.rule === undefined ? [] : [policyName(error.rule)])
      }
      return undefined
    },
  }
}

/**
 * A header value every adapter sends as given (RFC 9110 field-value): tabs, printable ASCII and
 * U+0080–U+00FF, no surrounding whitespace. Node refuses anything else (CR, LF, `✓`) on every
 * response, which would be a 500, and fetch's `Headers` trims what Node sends as it is.
 */
function isFieldValue(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    /^[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/.test(value)
  )
}
