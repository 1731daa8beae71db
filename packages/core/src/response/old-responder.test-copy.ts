// The wire output of the responder before it was made smaller (policy fields, families, problem
// bodies, responder), copied as it was, for wire-output.test.ts to compare the current one with.
// Test code only: not exported from the package.
import { greatestCommonDivisor, MAX_FIELD_INTEGER } from '../algorithms/integer.js'
import { isRateLimitError } from '../errors.js'
import {
  DRAFT_6_GROUP,
  DRAFT_7_GROUP,
  type FieldGroup,
  type MergeFields,
  X_RATE_LIMIT_GROUP,
} from '../headers/field-merge.js'
import { mergeGroups } from '../headers/old-merge/merge-groups.test-copy.js'
import { createPartitionKeyHasher, type PartitionKeyHasher } from '../headers/partition-key.js'
import { serializeInteger, serializeString } from '../headers/structured-fields.js'
import type { FieldWriter, HeaderEntries } from '../headers/types.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import { DEFAULT_STORE_ERROR_RETRY_AFTER_MS } from '../limiter/types.js'

// Option checks are not what this copy is for (the test gives valid options only): stand-ins, so
// that the copy does not follow the option checks' own changes.
const checkBoolean = (_name: string, value: boolean) => value
const checkOneOf = <T>(_name: string, value: T, _values: readonly T[]) => value
const invalidOption = (name: string, problem: string) => new Error(`${name}: ${problem}`)
const shown = (value: unknown) => String(value)

/**
 * Everything about a rule that does not change from request to request, serialized once: the
 * policy name, the `RateLimit-Policy` items of each draft, and the prefix of its `RateLimit`
 * item. Keyed by rule id and checked against the decision's figures, so a rule whose quota
 * changes (a dynamic plan) gets fresh strings.
 */
type PolicyFields = {
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
}

/** A rule's quota per whole seconds: the drafts allow no sub-second windows. */
function quotaPerSeconds(quota: number, windowMs: number): { q: number; w: number } {
  // Scale both by the smallest factor that makes the window whole seconds (1 for a window of
  // whole seconds): 10 per 100 ms is sent as 100 per 1 s, 1 per 1500 ms as 2 per 3 s. The rate
  // is exact.
  const factor = 1000 / greatestCommonDivisor(windowMs, 1000)
  if (quota * factor <= MAX_FIELD_INTEGER)
    return { q: quota * factor, w: (windowMs * factor) / 1000 }
  return { q: quota, w: Math.ceil(windowMs / 1000) }
}

/**
 * The policy name for a rule id; rule ids are printable ASCII already, this is a safety net:
 * any other character is percent-encoded as UTF-8 (a lone surrogate as U+FFFD).
 */
function policyName(ruleId: string): string {
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
function buildPolicyFields(decision: RuleDecision): PolicyFields {
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
    const { q, w } = quotaPerSeconds(quota, windowMs)
    const rate = `${serializeInteger(q)};w=${serializeInteger(w)}`
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
    quota,
    windowMs,
    limit,
    name,
    policyItem,
    rateItemPrefix: `${quoted};r=`,
    legacyPolicyItem,
    description,
  }
}

// The families of rate-limit fields and how a verdict is written in them: one table that option
// validation, the field names (`Access-Control-Expose-Headers`), merging with another
// middleware's fields and writing all read.

/**
 * Which IETF RateLimit fields to send (draft-ietf-httpapi-ratelimit-headers):
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`;
 * - `'draft-7'`: `RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`;
 * - `'draft-8'` to `'draft-11'` (one syntax): `RateLimit-Policy: "name";q=…;w=…` and
 *   `RateLimit: "name";r=…;t=…`, one list member per policy;
 * - `'draft-12'`: the same `RateLimit-Policy`, and `RateLimit: "name";a=…;w=…;c=…` (available
 *   quota, effective window, and what the request cost).
 */
type StandardHeaders =
  | 'draft-6'
  | 'draft-7'
  | 'draft-8'
  | 'draft-9'
  | 'draft-10'
  | 'draft-11'
  | 'draft-12'

/** How `X-RateLimit-Reset` is written. */
type LegacyReset = 'epoch-seconds' | 'delta-seconds'

/** The header options after parsing, with the per-rule string cache. */
type HeaderConfig = {
  readonly legacyReset: LegacyReset
  readonly shadowPolicies: boolean
  readonly policyFields: (decision: RuleDecision) => PolicyFields
  /**
   * The latest epoch second `X-RateLimit-Reset` was written for, and its text: every request
   * within one second (and under one window) sends the same value, so its text is made once per
   * second.
   */
  readonly epochReset: { second: number; text: string }
  /** The families these options turn on, in the order their fields are sent. */
  readonly families: readonly HeaderFamily[]
}

/** A listed decision's `pk` value (a serialized byte sequence), or undefined for none. */
type PartitionKeyOf = (decision: RuleDecision) => string | undefined

/**
 * One family of rate-limit fields (`X-RateLimit-*`, draft-6, draft-7, the current draft): one
 * module each, listed in `families/index.ts`, whose table every reader of the families uses:
 * option validation, the field names (`Access-Control-Expose-Headers`), merging with another
 * middleware's fields, and writing them.
 */
type HeaderFamily = {
  /** The `standardHeaders` values that select it; none for `X-RateLimit-*` (`legacyHeaders`). */
  readonly standardHeaders: readonly StandardHeaders[]
  /** Its fields carry a `pk` parameter when `partitionKey` is on. */
  readonly partitionKeys: boolean
  /** Every field it may send, as written. */
  readonly names: readonly string[]
  /** Its fields that hold one value: set, never appended (`isSingleValuedName`); none if absent. */
  readonly singleValued?: readonly string[]
  /** Its single-valued fields as `mergeFields` keeps or replaces them together, if it has any. */
  readonly group?: FieldGroup | undefined
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

/** `Retry-After` delay-seconds: whole seconds rounded up, at least 1 (0 would invite a retry storm). */
function retryAfterSeconds(ms: number | undefined): number {
  return Math.max(1, Math.ceil((ms ?? 0) / 1000))
}

/** Seconds until a decision's quota is back: its retry time when denied, else until full. */
function effectiveWindowSeconds(decision: RuleDecision): number {
  return decision.allowed
    ? Math.max(0, Math.ceil(decision.resetAfterMs / 1000))
    : retryAfterSeconds(decision.retryAfterMs)
}

/**
 * True for the decisions that the current-form list shows: enforcing ones (shadow ones too with
 * `shadowPolicies`) whose figures describe a real quota. The limiter makes up a fail-closed
 * denial while the store is down (`storeFailed`), and a missing-identity denial (denied with no
 * retry time), rather than reading them from the store: no header reports those.
 */
function isListed(decision: RuleDecision, shadowPolicies: boolean): boolean {
  return (
    (decision.mode === 'enforce' || shadowPolicies) &&
    decision.storeFailed !== true &&
    (decision.allowed || decision.retryAfterMs !== undefined)
  )
}

/**
 * `X-RateLimit-Limit`, `-Remaining`, `-Reset`: the de facto fields (GitHub's), turned on by
 * `legacyHeaders`; the reset as an epoch second or, with `legacyReset: 'delta-seconds'`, as
 * seconds from now. They describe the deciding rule.
 */
const xRateLimitHeaders = {
  standardHeaders: [],
  partitionKeys: false,
  names: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
  singleValued: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
  group: X_RATE_LIMIT_GROUP,
  /**
   * Writes `X-RateLimit-Limit`, `-Remaining` and `-Reset` for the deciding rule; returns how many
   * fields it wrote.
   */
  write(writer, verdict, now, config) {
    // The deciding rule, when its figures describe a real quota.
    const deciding = verdict.deciding
    if (deciding === undefined || !isListed(deciding, true)) return 0
    // An epoch second's text is made once per second: every request of that second sends the
    // same; the limit's is String's, which engines cache for small integers.
    writer.write('X-RateLimit-Limit', String(config.policyFields(deciding).limit))
    writer.write('X-RateLimit-Remaining', String(deciding.remaining))
    let reset: string
    if (config.legacyReset === 'epoch-seconds') {
      const second = Math.ceil((now + deciding.resetAfterMs) / 1000)
      const cached = config.epochReset
      if (cached.second !== second) {
        cached.second = second
        cached.text = String(second)
      }
      reset = cached.text
    } else {
      reset = String(Math.max(0, Math.ceil(deciding.resetAfterMs / 1000)))
    }
    writer.write('X-RateLimit-Reset', reset)
    return 3
  },
} as const satisfies HeaderFamily

/**
 * Draft 6: `RateLimit-Policy` (an Item) and the three Integer fields `RateLimit-Limit`,
 * `-Remaining`, `-Reset`, for the deciding rule.
 */
const draft6Headers = {
  standardHeaders: ['draft-6'],
  partitionKeys: false,
  names: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'],
  singleValued: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  group: DRAFT_6_GROUP,
  /** Writes draft 6's four fields for the deciding rule; returns how many it wrote. */
  write(writer, verdict, _now, config) {
    // The deciding rule, when its figures describe a real quota.
    const deciding = verdict.deciding
    if (deciding === undefined || !isListed(deciding, true)) return 0
    const fields = config.policyFields(deciding)
    writer.write('RateLimit-Policy', fields.legacyPolicyItem)
    writer.write('RateLimit-Limit', String(fields.limit))
    writer.write('RateLimit-Remaining', String(deciding.remaining))
    writer.write('RateLimit-Reset', String(effectiveWindowSeconds(deciding)))
    return 4
  },
} as const satisfies HeaderFamily

/**
 * Draft 7: `RateLimit-Policy` (an Item) and `RateLimit: limit=…, remaining=…, reset=…` (a
 * Dictionary), for the deciding rule. `RateLimit` holds one value here but shares its name with
 * the current draft's List, so it is merged rather than known as single-valued by name.
 */
const draft7Headers = {
  standardHeaders: ['draft-7'],
  partitionKeys: false,
  names: ['RateLimit', 'RateLimit-Policy'],
  group: DRAFT_7_GROUP,
  /**
   * Writes draft 7's `RateLimit-Policy` and `RateLimit` for the deciding rule; returns how many it
   * wrote.
   */
  write(writer, verdict, _now, config) {
    // The deciding rule, when its figures describe a real quota.
    const deciding = verdict.deciding
    if (deciding === undefined || !isListed(deciding, true)) return 0
    const reset = effectiveWindowSeconds(deciding)
    writer.write('RateLimit-Policy', config.policyFields(deciding).legacyPolicyItem)
    writer.write(
      'RateLimit',
      `limit=${deciding.limit}, remaining=${deciding.remaining}, reset=${reset}`,
    )
    return 2
  },
} as const satisfies HeaderFamily

/**
 * Drafts 8 to 11 (one syntax): `RateLimit-Policy: "name";q=…;w=…` and `RateLimit:
 * "name";r=…;t=…`, one List member per matching rule (enforcing ones, unless `shadowPolicies`),
 * each with its `pk` when partition keys are on.
 */
const CURRENT_HEADERS = {
  standardHeaders: ['draft-8', 'draft-9', 'draft-10', 'draft-11'],
  partitionKeys: true,
  names: ['RateLimit', 'RateLimit-Policy'],
  write(writer, verdict, _now, config, partitionKeyOf) {
    let policies = ''
    let limits = ''
    const decisions = verdict.decisions
    for (let i = 0; i < decisions.length; i++) {
      const decision = decisions[i]!
      if (!isListed(decision, config.shadowPolicies)) continue
      const fields = config.policyFields(decision)
      const pk = partitionKeyOf?.(decision)
      const pkParam = pk === undefined ? '' : `;pk=${pk}`
      const separator = policies === '' ? '' : ', '
      policies += separator + fields.policyItem + pkParam
      // Slots in flight come back when requests end, at no time anyone can tell: an admitted
      // concurrency decision has no `t`. One template each: no string is made for `t` alone.
      limits +=
        decision.allowed && decision.policy.unit !== undefined
          ? `${separator}${fields.rateItemPrefix}${decision.remaining}${pkParam}`
          : `${separator}${fields.rateItemPrefix}${decision.remaining};t=${effectiveWindowSeconds(decision)}${pkParam}`
    }
    if (policies === '') return 0
    writer.write('RateLimit-Policy', policies)
    writer.write('RateLimit', limits)
    return 2
  },
} as const satisfies HeaderFamily

/**
 * Draft 12: `RateLimit-Policy` as in drafts 8 to 11 (`q`, `qu`, `w`, `pk`), and `RateLimit:
 * "name";a=…;w=…;c=…`, one List member per matching rule as in the current form. Draft 12
 * renamed the available quota `r` to `a` and the effective window `t` to `w`, and added `c`,
 * the quota units the request consumed: written on each rule that admitted an admitted request
 * (the units it counted), left out when the request was refused (charges are all or nothing:
 * a refused request took nothing under any rule) and on a shadow rule that would have refused.
 * Its `RateLimit-Partition` field is not written: see docs/concepts/headers.md.
 */
const draft12Headers = {
  standardHeaders: ['draft-12'],
  partitionKeys: true,
  names: ['RateLimit', 'RateLimit-Policy'],
  /** Writes draft 12's `RateLimit-Policy` and `RateLimit` lists; returns how many it wrote. */
  write(writer, verdict, _now, config, partitionKeyOf) {
    let policies = ''
    let limits = ''
    const decisions = verdict.decisions
    const charged = verdict.allowed
    for (let i = 0; i < decisions.length; i++) {
      const decision = decisions[i]!
      if (!isListed(decision, config.shadowPolicies)) continue
      const fields = config.policyFields(decision)
      const pk = partitionKeyOf?.(decision)
      const pkParam = pk === undefined ? '' : `;pk=${pk}`
      const separator = policies === '' ? '' : ', '
      policies += separator + fields.policyItem + pkParam
      // As in the current form, an admitted concurrency decision has no effective window.
      const window =
        decision.allowed && decision.policy.unit !== undefined
          ? ''
          : `;w=${effectiveWindowSeconds(decision)}`
      const cost = charged && decision.allowed ? `;c=${decision.cost}` : ''
      limits += `${separator}${serializeString(fields.name)};a=${decision.remaining}${window}${pkParam}${cost}`
    }
    if (policies === '') return 0
    writer.write('RateLimit-Policy', policies)
    writer.write('RateLimit', limits)
    return 2
  },
} as const satisfies HeaderFamily

/**
 * Every family of rate-limit fields, in the order a response carries them: what `rateLimit`
 * and `createResponder` offer. Adding one is its module, a line here, and its `standardHeaders`
 * value in `StandardHeaders` and `STANDARD_HEADERS`; option validation, field names, merging and
 * writing all read the families a responder is given. A middleware composed with
 * `createRateLimit` has the current draft's and those its `headers` part names.
 */
const FAMILIES: readonly HeaderFamily[] = [
  xRateLimitHeaders,
  draft6Headers,
  draft7Headers,
  CURRENT_HEADERS,
  draft12Headers,
]

/**
 * Every `standardHeaders` value, as the option accepts them (`false`: none), whichever families
 * a responder was given (field-merge.test.ts checks it against `FAMILIES`).
 */
const STANDARD_HEADERS: ReadonlyArray<StandardHeaders | false> = [
  false,
  'draft-6',
  'draft-7',
  ...CURRENT_HEADERS.standardHeaders,
  'draft-12',
]

/** Which families an app's header options turn on. */
type FamilyOptions = {
  readonly legacyHeaders: boolean
  readonly standardHeaders: StandardHeaders | false
}

/** The families a configuration sends, of every family, in the order their fields go out. */
function familiesFor(options: FamilyOptions): readonly HeaderFamily[] {
  return FAMILIES.filter((family) =>
    family === xRateLimitHeaders
      ? options.legacyHeaders
      : options.standardHeaders !== false &&
        family.standardHeaders.includes(options.standardHeaders),
  )
}

/**
 * The rate-limit fields for a verdict (no `Retry-After`: that belongs to denials only), in the
 * order `fieldWriter` writes them.
 */
function rateLimitHeaders(
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  partitionKeyOf?: PartitionKeyOf,
): Array<readonly [string, string]> {
  const list: Array<readonly [string, string]> = []
  const writer: FieldWriter = { write: (name, value) => list.push([name, value]) }
  for (const family of config.families) family.write(writer, verdict, now, config, partitionKeyOf)
  return list
}

/**
 * Writes an admitted verdict's fields one by one, as a field writer receives them; `merge` is
 * `mergeFields` for the fields it writes (knowing only the groups of its families), for a
 * response that already carries another middleware's.
 */
type WriteVerdictFields = {
  (verdict: Verdict, writer: FieldWriter): void
  readonly merge: MergeFields
}

/**
 * Writes an admitted verdict's fields one by one, in the order of `rateLimitHeaders`, then
 * `expose` (`Access-Control-Expose-Headers`) when any was written. Single-valued fields
 * (`X-RateLimit-*`, draft-6, draft-7) describe the verdict's `deciding` rule; the current form
 * lists every matching rule (enforcing ones unless `shadowPolicies`), each with its `pk` when
 * `partitionKeyOf` gives one.
 */
function fieldWriter(
  config: HeaderConfig,
  partitionKeyOf: PartitionKeyOf | undefined,
  expose: readonly [string, string] | undefined,
): WriteVerdictFields {
  const groups = config.families.flatMap((family) => family.group ?? [])
  function writeFields(verdict: Verdict, writer: FieldWriter): void {
    // A queued request is answered at its slot: its reset times count from there.
    const now = verdict.waitMs === undefined ? verdict.at : verdict.at + verdict.waitMs
    // An indexed loop: this runs for every admitted request.
    const families = config.families
    let written = 0
    for (let i = 0; i < families.length; i++)
      written += families[i]!.write(writer, verdict, now, config, partitionKeyOf)
    if (expose !== undefined && written > 0) writer.write(expose[0], expose[1])
  }
  writeFields.merge = ((entries, existing) =>
    mergeGroups(groups, entries, existing)) satisfies MergeFields
  return writeFields
}

const CACHE_LIMIT = 1000

/** Returns the cached fields of a decision's rule, building them on first sight. */
function createPolicyFieldCache(): (decision: RuleDecision) => PolicyFields {
  const cache = new Map<string, PolicyFields>()
  // The last rule's fields, checked before the map: a response asks once per family. Fields
  // are fresh while the decision's figures are the ones they were built from (a dynamic plan
  // may change a rule's quota).
  let last: PolicyFields | undefined
  return function policyFields(decision) {
    const policy = decision.policy
    let fields = last?.rule === decision.rule ? last : cache.get(decision.rule)
    if (
      fields === undefined ||
      fields.quota !== policy.quota ||
      fields.windowMs !== policy.windowMs ||
      fields.limit !== decision.limit
    ) {
      fields = buildPolicyFields(decision)
      if (cache.size >= CACHE_LIMIT) cache.clear()
      cache.set(decision.rule, fields)
    }
    last = fields
    return fields
  }
}

/**
 * RFC 9457 problem details for the responses Tollgate sends itself. The two problem types come
 * from draft-ietf-httpapi-ratelimit-headers (§5; the draft asks IANA to register them); the
 * others use `about:blank`, whose title is the status phrase, plus a `code`.
 */

/** The draft's problem types (§5): `#quota-exceeded` (429), `#temporary-reduced-capacity` (503). */
const DRAFT_TYPES = 'https://iana.org/assignments/http-problem-types#'

/** RFC 9457's media type for problem details in JSON. */
const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** The body of every response Tollgate refuses a request with (`application/problem+json`). */
type ProblemDetails = {
  readonly type: string
  readonly title: string
  readonly status: number
  /** For people: what happened and what to do. */
  readonly detail: string
  /** The names of the policies (rule ids) the request exceeded, as in the `RateLimit` field. */
  readonly 'violated-policies'?: readonly string[]
  /** Seconds to wait before retrying; the same figure as `Retry-After`. */
  readonly retryAfter?: number
  /** A stable code for responses that are not about a quota. */
  readonly code?: string
}

/** A violated policy, named and described for the `detail` text. */
type ViolatedPolicy = { readonly name: string; readonly description: string }

/** The titles by status: the draft's problem types' titles, else the status phrase. */
const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'Quota Exceeded',
  503: 'Temporary Reduced Capacity',
}

/**
 * Every problem Tollgate sends, in one shape: its type and title follow from the status; with
 * `retryAfter`, the detail ends by saying when to retry. Members are added in the order the
 * body lists them, only when given.
 */
function problem(
  status: number,
  detail: string,
  code?: string,
  retryAfter?: number,
  policies?: readonly string[],
): ProblemDetails {
  const title = TITLES[status]!
  const details: { -readonly [K in keyof ProblemDetails]: ProblemDetails[K] } = {
    // The draft's two types (429, 503) are named after their titles; the others are plain.
    type: status < 429 ? 'about:blank' : DRAFT_TYPES + title.toLowerCase().replace(/ /g, '-'),
    title,
    status,
    detail: retryAfter === undefined ? detail : `${detail} Retry after ${retryAfter} s.`,
  }
  if (policies !== undefined) details['violated-policies'] = policies
  if (retryAfter !== undefined) details.retryAfter = retryAfter
  if (code !== undefined) details.code = code
  return details
}

/** 429: the request exceeds one or more enforcing rules. */
function quotaExceededProblem(
  violated: readonly ViolatedPolicy[],
  retryAfter: number,
): ProblemDetails {
  const which = violated.map((p) => `"${p.name}" (${p.description})`).join(', ')
  const policies = violated.length === 1 ? 'policy' : 'policies'
  return problem(
    429,
    `Too many requests for the rate-limit ${policies} ${which}.`,
    undefined,
    retryAfter,
    violated.map((p) => p.name),
  )
}

/** A retry time no real denial has, standing in for the figure while a template is made. */
const RETRY_PLACEHOLDER = 918_273_645_546

/**
 * The 429 problem and its JSON text. For one violated policy (the usual case) the text is
 * assembled from pieces cached per policy, since only the retry seconds change between denials:
 * several times cheaper than `JSON.stringify` on every 429 of a flood.
 */
function createQuotaExceededBodies(): (
  violated: readonly ViolatedPolicy[],
  retryAfter: number,
) => { readonly problem: ProblemDetails; readonly body: string } {
  const templates = new WeakMap<ViolatedPolicy, readonly string[]>()
  return function quotaExceeded(violated, retryAfter) {
    const problem = quotaExceededProblem(violated, retryAfter)
    const policy = violated.length === 1 ? violated[0]! : undefined
    let pieces = policy && templates.get(policy)
    if (policy !== undefined && pieces === undefined) {
      // The placeholder is the retry figure twice: in `detail` and as `retryAfter`. A name that
      // holds it too makes more pieces, and such a policy's body is made whole each time.
      const json = JSON.stringify(quotaExceededProblem(violated, RETRY_PLACEHOLDER))
      pieces = json.split(String(RETRY_PLACEHOLDER))
      templates.set(policy, pieces)
    }
    const body = pieces?.length === 3 ? pieces.join(String(retryAfter)) : JSON.stringify(problem)
    return { problem, body }
  }
}

/** 503 `detail`: the store failed and a fail-closed rule matched. */
const STORE_UNAVAILABLE =
  'Rate limits cannot be checked right now, and this endpoint does not serve requests unchecked.'

/** 400 (or 401/403 as configured) `detail`: a rule keys on an identity the request lacks. */
const MISSING_IDENTITY =
  'This endpoint is rate-limited per client identity (such as an API key or a signed-in user), and the request carries none.'

/** 403 `detail`: the client is on the limiter's `denyList`; no rule was consulted, so no Retry-After. */
const DENY_LISTED = 'This client is not allowed to use this API.'

/**
 * 403 `detail`: a rule's penalty blocks the client, whose offences reached the rule's
 * `forbidAfter`. The block still ends: `retryAfter` (and `Retry-After`) say when.
 */
const PENALTY_FORBIDDEN = 'Blocked after repeated requests over the rate limit.'

/** 400: a request whose cost exceeds a rule's capacity; it can never pass, so no Retry-After. */
function costExceedsCapacityProblem(rule: string | undefined): ProblemDetails {
  const which = rule === undefined ? 'a rate-limit rule' : `the rate-limit rule "${rule}"`
  return problem(
    400,
    `This request costs more than ${which} allows at once, so it can never be served; split it into smaller requests.`,
    'ERR_RL_COST_EXCEEDS_CAPACITY',
  )
}

/** The status for a request that lacks the identity a rule keys on and is configured to refuse. */
type MissingIdentityResponse =
  | { readonly status: 400 | 403 }
  /** 401 must name an authentication scheme (RFC 9110 §15.5.2), which only the app knows. */
  | { readonly status: 401; readonly wwwAuthenticate: string }

/** What to send; every option has a default, so `createResponder()` is a complete setup. */
type ResponderOptions = {
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
type LimitResponse =
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

/** The compiled responder: per-request functions only. */
type Responder = {
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
}

/**
 * Parses the header options once and returns the per-request functions.
 * @example
 * const responder = createResponder({ standardHeaders: 'draft-11', exposeHeaders: true })
 * const { headers, status, body } = responder.respond(verdict, Date.now())
 */
function createResponder(options: ResponderOptions = {}): Responder {
  return composeResponder(options, EVERY_PART)
}

/** What `createResponder` and `rateLimit` are made with: every family, and SHA-256. */
const EVERY_PART: ResponderParts = {
  partitionKeys: createPartitionKeyHasher,
  families: familiesFor,
}

/** What a responder is made with: the families of fields it may send, the partition-key hasher. */
type ResponderParts = {
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
function composeResponder(options: ResponderOptions, parts: ResponderParts): Responder {
  const flag = (name: 'legacyHeaders' | 'shadowPolicies' | 'exposeHeaders') =>
    checkBoolean(name, options[name] ?? false)
  // Checked in the options' order; the families chosen by two of them are all the fields need.
  const legacyHeaders = flag('legacyHeaders')
  const config: HeaderConfig = {
    legacyReset: checkOneOf('legacyReset', options.legacyReset ?? 'epoch-seconds', LEGACY_RESETS),
    families: parts.families({
      legacyHeaders,
      standardHeaders: checkOneOf(
        'standardHeaders',
        options.standardHeaders ?? 'draft-11',
        STANDARD_HEADERS,
      ),
    }),
    shadowPolicies: flag('shadowPolicies'),
    policyFields: createPolicyFieldCache(),
    epochReset: { second: Number.NaN, text: '' },
  }
  // Every header name this configuration can send, for `Access-Control-Expose-Headers`.
  const names = [...config.families.flatMap((family) => family.names), 'Retry-After']
  const expose = flag('exposeHeaders')
    ? (['Access-Control-Expose-Headers', names.join(', ')] as const)
    : undefined
  const missing = checkMissingIdentity(options.missingIdentity ?? { status: 400 })
  const partitionKeyOf = partitionKeys(options.partitionKey, config.families, parts)
  const quotaExceeded = createQuotaExceededBodies()

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
    const headers = rateLimitHeaders(verdict, now, config, partitionKeyOf)
    if (verdict.allowed) {
      if (expose !== undefined && headers.length > 0) headers.push(expose)
      return { allowed: true, status: undefined, headers, body: undefined, problem: undefined }
    }
    const { reason, deciding } = verdict
    const nameOf = (d: RuleDecision) => config.policyFields(d).name
    if (reason === 'store-unavailable') {
      // The limiter's made-up denials carry its storeErrorRetryAfterMs.
      const failed = verdict.decisions.filter((d) => d.storeFailed === true && !d.allowed)
      return storeUnavailable(headers, failed.map(nameOf), deciding?.retryAfterMs)
    }
    if (reason === 'missing-identity') {
      if (missing.status === 401) headers.push(['WWW-Authenticate', missing.wwwAuthenticate])
      return refuse(headers, problem(missing.status, MISSING_IDENTITY, 'missing-identity'))
    }
    if (reason === 'deny-list') return refuse(headers, problem(403, DENY_LISTED, 'deny-listed'))
    const violated = verdict.decisions.filter((d) => d.mode === 'enforce' && !d.allowed)
    if (violated.length === 0 && deciding !== undefined) violated.push(deciding)
    const retryAfter = retryAfterSeconds(
      deciding?.retryAfterMs ?? Math.max(0, ...violated.map((d) => d.retryAfterMs ?? 0)),
    )
    if (reason === 'forbidden') {
      return refuse(
        headers,
        problem(403, PENALTY_FORBIDDEN, 'penalty-forbidden', retryAfter, violated.map(nameOf)),
      )
    }
    const quota = quotaExceeded(violated.map(config.policyFields), retryAfter)
    return refuse(headers, quota.problem, quota.body)
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

const LEGACY_RESETS: readonly LegacyReset[] = ['epoch-seconds', 'delta-seconds']

function checkMissingIdentity(value: MissingIdentityResponse): MissingIdentityResponse {
  const { status } = value
  const challenge = (value as { wwwAuthenticate?: unknown }).wwwAuthenticate
  if (status === 400 || status === 403 || (status === 401 && isFieldValue(challenge))) return value
  throw invalidOption(
    'missingIdentity',
    status === 401 && typeof challenge === 'string' && challenge !== ''
      ? `wwwAuthenticate ${shown(challenge)} cannot be sent as a header value (printable characters, no line breaks, no surrounding spaces)`
      : 'expected { status: 400 }, { status: 403 } or { status: 401, wwwAuthenticate: "<scheme>" }',
  )
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

/**
 * The `pk` of each listed decision, hashed as the fields ask for it, while they are written; or
 * undefined when `partitionKey` is off. `true` hashes the decision's `key`, a function picks the
 * text: a number as text; `null`, an object or '' would all hash to one `pk` shared by every
 * client, so they give none.
 */
function partitionKeys(
  option: ResponderOptions['partitionKey'],
  families: readonly HeaderFamily[],
  parts: ResponderParts,
): PartitionKeyOf | undefined {
  if (option == null || option === false) return undefined
  if (option !== true && typeof option !== 'function') {
    throw invalidOption('partitionKey', `expected true, false or a function, got ${shown(option)}`)
  }
  if (!families.some((family) => family.partitionKeys)) {
    // A partition key nothing sends would be hashed on every request for no field.
    throw invalidOption(
      'partitionKey',
      "no field sends it: standardHeaders 'draft-8' or later does",
    )
  }
  const keyOf = option === true ? (decision: RuleDecision) => decision.key : option
  const hash = parts.partitionKeys()
  return (decision) => {
    const key: unknown = keyOf(decision)
    return typeof key === 'number' || (typeof key === 'string' && key !== '')
      ? hash(String(key))
      : undefined
  }
}

export { createResponder as createOldResponder }
