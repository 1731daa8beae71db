import {
  effectiveWindowSeconds,
  isListed,
  type LegacyReset,
  reportableDeciding,
  retryAfterSeconds,
  type StandardHeaders,
} from '../headers/config.js'
import type { HeaderEntries } from '../headers/types.js'
import type { Verdict } from '../limiter/types.js'
import {
  fieldsForOwnAnswer,
  missingIdentityProblem,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  quotaExceededProblem,
  storeUnavailableProblem,
} from '../response/problem.js'
import type { Denial, MissingIdentityResponse } from '../response/responder.js'
import { invalidOption } from './edge-options.js'
import { createEdgePolicyFields } from './edge-policy.js'
import { ELSEWHERE_PROBLEM } from './edge-rules.js'

/** The response options the edge entry takes: the field forms of `@tollgate/hono`'s defaults. */
export type EdgeResponseOptions = {
  /** Send `X-RateLimit-Limit`, `-Remaining` and `-Reset`. @default true */
  readonly legacyHeaders?: boolean | undefined
  /** `X-RateLimit-Reset` as an epoch second, or seconds from now. @default 'epoch-seconds' */
  readonly legacyReset?: LegacyReset | undefined
  /**
   * The current IETF form (`RateLimit`, `RateLimit-Policy`: drafts 8 to 11, one syntax), or
   * `false` for none. Drafts 6 and 7 are refused: `@tollgate/hono` sends them. @default 'draft-11'
   */
  readonly standardHeaders?: Exclude<StandardHeaders, 'draft-6' | 'draft-7'> | false | undefined
  /** @default { status: 400 } */
  readonly missingIdentity?: MissingIdentityResponse | undefined
}

/**
 * What a request gets: its verdict; the fields of an admission (`fields`), or a denial with the
 * fields its answer carries (`denialFields`: without `Content-Type` when the app answers).
 */
export type EdgeAnswer = {
  readonly verdict: Verdict
  readonly fields: HeaderEntries
  readonly denial: Denial | undefined
  readonly denialFields: HeaderEntries | undefined
}

const CURRENT_FORMS: readonly unknown[] = [false, 'draft-8', 'draft-9', 'draft-10', 'draft-11']
/** A header value sent as given: printable, no line breaks, no surrounding blanks. */
const FIELD_VALUE = /^[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/

/**
 * The fields and denials of `createResponder` for the forms the edge entry takes: the same
 * fields in the same order, the same statuses and problem bodies (policy names are rule ids,
 * validated printable).
 */
export function createEdgeResponder(
  options: EdgeResponseOptions,
  ownAnswer: boolean,
): (verdict: Verdict) => EdgeAnswer {
  const legacy = options.legacyHeaders ?? true
  const legacyReset = options.legacyReset ?? 'epoch-seconds'
  const standard: unknown = options.standardHeaders ?? 'draft-11'
  if (typeof legacy !== 'boolean') throw invalidOption('legacyHeaders', 'expected true or false')
  if (legacyReset !== 'epoch-seconds' && legacyReset !== 'delta-seconds') {
    throw invalidOption('legacyReset', `expected "epoch-seconds" or "delta-seconds"`)
  }
  if (!CURRENT_FORMS.includes(standard)) {
    throw invalidOption(
      'standardHeaders',
      standard === 'draft-6' || standard === 'draft-7'
        ? `${standard} is ${ELSEWHERE_PROBLEM}`
        : `expected false or "draft-8" to "draft-11"`,
    )
  }
  const missing = options.missingIdentity ?? { status: 400 }
  const status = missing?.status
  if (
    status !== 400 &&
    status !== 403 &&
    !(
      status === 401 &&
      typeof missing.wwwAuthenticate === 'string' &&
      FIELD_VALUE.test(missing.wwwAuthenticate)
    )
  ) {
    throw invalidOption(
      'missingIdentity',
      'expected { status: 400 }, { status: 403 } or { status: 401, wwwAuthenticate: <a header value> }',
    )
  }
  const policyFields = createEdgePolicyFields()

  function answer(
    verdict: Verdict,
    fields: Array<readonly [string, string]>,
    code: number,
    problem: ProblemDetails,
  ): EdgeAnswer {
    const body = JSON.stringify(problem)
    fields.push(['Content-Type', PROBLEM_CONTENT_TYPE])
    const denial: Denial = { allowed: false, status: code, headers: fields, body, problem }
    return {
      verdict,
      fields,
      denial,
      denialFields: ownAnswer ? fieldsForOwnAnswer(fields) : fields,
    }
  }

  return function respond(verdict) {
    const fields: Array<readonly [string, string]> = []
    // As the `X_RATELIMIT` and `CURRENT` families write them: the deciding rule's figures, then
    // one list member per enforcing rule with figures to report.
    const shown = reportableDeciding(verdict)
    if (legacy && shown !== undefined) {
      const { limit, remaining, resetAfterMs } = shown
      // `resetAfterMs` is whole ms ≥ 0 (store replies are checked): no floor at 0 is needed.
      const reset =
        legacyReset === 'epoch-seconds'
          ? Math.ceil((verdict.at + resetAfterMs) / 1000)
          : Math.ceil(resetAfterMs / 1000)
      fields.push(
        ['X-RateLimit-Limit', String(limit)],
        ['X-RateLimit-Remaining', String(remaining)],
        ['X-RateLimit-Reset', String(reset)],
      )
    }
    let policies = ''
    let limits = ''
    for (const decision of standard === false ? [] : verdict.decisions) {
      if (!isListed(decision, false)) continue
      const { policyItem, rateItemPrefix } = policyFields(decision)
      const separator = policies === '' ? '' : ', '
      policies += separator + policyItem
      limits += `${separator}${rateItemPrefix}${decision.remaining};t=${effectiveWindowSeconds(decision)}`
    }
    if (policies !== '') fields.push(['RateLimit-Policy', policies], ['RateLimit', limits])
    if (verdict.allowed) return { verdict, fields, denial: undefined, denialFields: undefined }
    const { reason, decisions, deciding } = verdict
    if (reason === 'missing-identity') {
      if (missing.status === 401) fields.push(['WWW-Authenticate', missing.wwwAuthenticate])
      return answer(verdict, fields, missing.status, missingIdentityProblem(missing.status))
    }
    // A denial's deciding decision has a retry: the store's, or, failed closed, the made-up
    // denial's storeErrorRetryAfterMs (the only decisions marked storeFailed).
    const failed = reason === 'store-unavailable'
    const retryAfter = retryAfterSeconds(deciding!.retryAfterMs)
    fields.push(['Retry-After', String(retryAfter)])
    const problem = failed
      ? storeUnavailableProblem(
          decisions.filter((d) => d.storeFailed).map((d) => d.rule),
          retryAfter,
        )
      : quotaExceededProblem(
          decisions.filter((d) => d.mode === 'enforce' && !d.allowed).map(policyFields),
          retryAfter,
        )
    return answer(verdict, fields, failed ? 503 : 429, problem)
  }
}
