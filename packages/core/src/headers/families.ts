import type { QuotaPolicy } from '../algorithms/types.js'
import type { RuleDecision, Verdict } from '../limiter/types.js'
import {
  DRAFT_6_GROUP,
  DRAFT_7_GROUP,
  type FieldGroup,
  type MergeFields,
  mergeGroups,
  X_RATE_LIMIT_GROUP,
} from './field-merge.js'
import { buildPolicyFields, type PolicyFields } from './policy-fields.js'
import { serializeString } from './structured-fields.js'
import type { FieldWriter } from './types.js'

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
export type StandardHeaders =
  | 'draft-6'
  | 'draft-7'
  | 'draft-8'
  | 'draft-9'
  | 'draft-10'
  | 'draft-11'
  | 'draft-12'

/** How `X-RateLimit-Reset` is written. */
export type LegacyReset = 'epoch-seconds' | 'delta-seconds'

/** The header options after parsing. */
export type HeaderConfig = {
  /** As given: unset (undefined or null) for `'epoch-seconds'`. */
  readonly legacyReset: LegacyReset | null | undefined
  readonly shadowPolicies: boolean
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
  /** Every field it may send, as written. */
  readonly names: readonly string[]
  /**
   * Its fields that hold one value: set, never appended (`isSingleValuedName`, a responder's
   * `singleValuedNames`), and written with `single`; none if absent.
   */
  readonly singleValued?: readonly string[]
  /**
   * Its single-valued fields as `mergeFields` keeps or replaces them together, if it has any.
   * A family without one sends Lists (drafts 8 and later), whose members carry a `pk` parameter
   * when `partitionKey` is on: the families with a group have none.
   */
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
export function retryAfterSeconds(ms: number | undefined): number {
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
 * The latest epoch second `X-RateLimit-Reset` was written for, and its text: every request
 * within one second sends the same value (whatever middleware writes it: the text is the
 * second's), so its text is made once per second; it starts as the text of second 0.
 */
const EPOCH_RESET = { second: 0, text: '0' }

/**
 * `X-RateLimit-Limit`, `-Remaining`, `-Reset`: the de facto fields (GitHub's), turned on by
 * `legacyHeaders`; the reset as an epoch second or, with `legacyReset: 'delta-seconds'`, as
 * seconds from now. They describe the deciding rule.
 */
export const xRateLimitHeaders = {
  standardHeaders: [],
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
    writer.write('X-RateLimit-Limit', String(policyFields(deciding).limit), true)
    writer.write('X-RateLimit-Remaining', String(deciding.remaining), true)
    let reset: string
    if (config.legacyReset !== 'delta-seconds') {
      const second = Math.ceil((now + deciding.resetAfterMs) / 1000)
      const cached = EPOCH_RESET
      if (cached.second !== second) {
        cached.second = second
        cached.text = String(second)
      }
      reset = cached.text
    } else {
      reset = String(Math.max(0, Math.ceil(deciding.resetAfterMs / 1000)))
    }
    writer.write('X-RateLimit-Reset', reset, true)
    return 3
  },
} as const satisfies HeaderFamily

/**
 * Draft 6: `RateLimit-Policy` (an Item) and the three Integer fields `RateLimit-Limit`,
 * `-Remaining`, `-Reset`, for the deciding rule.
 */
export const draft6Headers = {
  standardHeaders: ['draft-6'],
  names: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'],
  singleValued: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  group: DRAFT_6_GROUP,
  /** Writes draft 6's four fields for the deciding rule; returns how many it wrote. */
  write(writer, verdict) {
    // The deciding rule, when its figures describe a real quota.
    const deciding = verdict.deciding
    if (deciding === undefined || !isListed(deciding, true)) return 0
    const fields = policyFields(deciding)
    writer.write('RateLimit-Policy', fields.legacyPolicyItem)
    writer.write('RateLimit-Limit', String(fields.limit), true)
    writer.write('RateLimit-Remaining', String(deciding.remaining), true)
    writer.write('RateLimit-Reset', String(effectiveWindowSeconds(deciding)), true)
    return 4
  },
} as const satisfies HeaderFamily

/**
 * Draft 7: `RateLimit-Policy` (an Item) and `RateLimit: limit=…, remaining=…, reset=…` (a
 * Dictionary), for the deciding rule. `RateLimit` holds one value here but shares its name with
 * the current draft's List, so it is merged rather than known as single-valued by name.
 */
export const draft7Headers = {
  standardHeaders: ['draft-7'],
  names: ['RateLimit', 'RateLimit-Policy'],
  group: DRAFT_7_GROUP,
  /**
   * Writes draft 7's `RateLimit-Policy` and `RateLimit` for the deciding rule; returns how many it
   * wrote.
   */
  write(writer, verdict) {
    // The deciding rule, when its figures describe a real quota.
    const deciding = verdict.deciding
    if (deciding === undefined || !isListed(deciding, true)) return 0
    const reset = effectiveWindowSeconds(deciding)
    writer.write('RateLimit-Policy', policyFields(deciding).legacyPolicyItem)
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
export const CURRENT_HEADERS = {
  standardHeaders: ['draft-8', 'draft-9', 'draft-10', 'draft-11'],
  names: ['RateLimit', 'RateLimit-Policy'],
  write(writer, verdict, _now, config, partitionKeyOf) {
    let policies = ''
    let limits = ''
    const decisions = verdict.decisions
    for (let i = 0; i < decisions.length; i++) {
      const decision = decisions[i]!
      if (!isListed(decision, config.shadowPolicies)) continue
      const fields = policyFields(decision)
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
export const draft12Headers = {
  standardHeaders: ['draft-12'],
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
      const fields = policyFields(decision)
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
export const FAMILIES: readonly HeaderFamily[] = [
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
export const STANDARD_HEADERS: ReadonlyArray<StandardHeaders | false> = [
  false,
  'draft-6',
  'draft-7',
  ...CURRENT_HEADERS.standardHeaders,
  'draft-12',
]

/**
 * The families a configuration sends, of every family, in the order their fields go out: those
 * the two header options turn on (`legacyHeaders` unset for off, `standardHeaders` defaulted).
 */
export function familiesFor(
  legacyHeaders: boolean | null | undefined,
  standardHeaders: StandardHeaders | false,
): readonly HeaderFamily[] {
  return FAMILIES.filter((family) =>
    family === xRateLimitHeaders
      ? legacyHeaders
      : standardHeaders !== false && family.standardHeaders.includes(standardHeaders),
  )
}

/**
 * Writes a verdict's rate-limit fields in every family `config` turns on, in order (no
 * `Retry-After`: that belongs to denials only); returns how many it wrote. What `fieldWriter`
 * writes an admitted verdict with, and the responder a verdict's header entries.
 */
export function writeFamilies(
  writer: FieldWriter,
  verdict: Verdict,
  now: number,
  config: HeaderConfig,
  partitionKeyOf: PartitionKeyOf | undefined,
): number {
  // An indexed loop: this runs for every request.
  const families = config.families
  let written = 0
  for (let i = 0; i < families.length; i++)
    written += families[i]!.write(writer, verdict, now, config, partitionKeyOf)
  return written
}

/**
 * Writes an admitted verdict's fields one by one, as a field writer receives them; `merge` is
 * `mergeFields` for the fields it writes (knowing only the groups of its families), for a
 * response that already carries another middleware's.
 */
export type WriteVerdictFields = {
  (verdict: Verdict, writer: FieldWriter): void
  readonly merge: MergeFields
}

/**
 * Writes an admitted verdict's fields one by one, as `writeFamilies` does, then
 * `expose` (`Access-Control-Expose-Headers`) when any was written. Single-valued fields
 * (`X-RateLimit-*`, draft-6, draft-7) describe the verdict's `deciding` rule; the current form
 * lists every matching rule (enforcing ones unless `shadowPolicies`), each with its `pk` when
 * `partitionKeyOf` gives one.
 */
export function fieldWriter(
  config: HeaderConfig,
  partitionKeyOf: PartitionKeyOf | undefined,
  expose: readonly [string, string] | undefined,
): WriteVerdictFields {
  const groups = config.families.flatMap((family) => family.group ?? [])
  function writeFields(verdict: Verdict, writer: FieldWriter): void {
    // A queued request is answered at its slot: its reset times count from there.
    const now = verdict.at + (verdict.waitMs ?? 0)
    const written = writeFamilies(writer, verdict, now, config, partitionKeyOf)
    if (expose !== undefined && written > 0) writer.write(expose[0], expose[1])
  }
  writeFields.merge = ((entries, existing) =>
    mergeGroups(groups, entries, existing)) satisfies MergeFields
  return writeFields
}

const RETRY_AFTER = 'retry-after'

/**
 * Lower-case names whose presence on a response calls for `mergeFields`: every field a family
 * sends is single-valued in some draft (`RateLimit` is draft-7's Dictionary) or, as
 * `RateLimit-Policy`, differs in form between drafts (Items or a List) and must match.
 */
// Pure (no spread, annotated calls), so a bundle that never merges fields drops it.
const MERGED: ReadonlySet<string> = /* @__PURE__ */ new Set(
  /* @__PURE__ */ FAMILIES.flatMap((family) => family.names)
    .map((name) => name.toLowerCase())
    .concat(RETRY_AFTER),
)

/**
 * True when a response whose fields have these lower-case names (Node's `getHeaderNames()`)
 * may already carry a single-valued rate-limit field (`RateLimit` counts: it is single-valued in
 * draft-7), or a `RateLimit-Policy` whose draft must match. Cheap on the common response, which
 * has none or only framework fields.
 */
export function carriesSingleValuedField(present: readonly string[]): boolean {
  for (let i = 0; i < present.length; i++) if (MERGED.has(present[i]!)) return true
  return false
}

/**
 * The fields of each quota policy: one object per compiled rule, and per set of client figures.
 * Weakly held, so they go with the rules; shared by every responder, since they depend on the
 * rule alone (a policy whose figures change is a new object).
 */
const FIELDS = /* @__PURE__ */ new WeakMap<QuotaPolicy, PolicyFields>()
// Held strongly, one policy at a time: at most one retired rule's fields outlive it.
let lastPolicy: QuotaPolicy | undefined
let lastFields: PolicyFields | undefined

/**
 * The fields of a decision's rule, built on first sight: the policy's, while the decision's
 * rule and limit (a rule's share while degraded) are those they were built for.
 */
export function policyFields(decision: RuleDecision): PolicyFields {
  const policy = decision.policy
  // The policy seen last first: a one-rule app's every request, without a WeakMap lookup.
  const known = policy === lastPolicy ? lastFields : FIELDS.get(policy)
  if (known?.rule === decision.rule && known.limit === decision.limit) {
    lastPolicy = policy
    lastFields = known
    return known
  }
  const fields = buildPolicyFields(decision)
  FIELDS.set(policy, fields)
  return fields
}
