/**
 * RFC 9457 problem details for the responses Tollgate sends itself. The two problem types come
 * from draft-ietf-httpapi-ratelimit-headers (§5; the draft asks IANA to register them); the
 * others use `about:blank`, whose title is the status phrase, plus a `code`.
 */

/** The draft's problem type for a request over one or more quota policies (429). */
const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded'
/** The draft's problem type for a 503 while capacity (here: the store) is reduced. */
const TEMPORARY_REDUCED_CAPACITY_TYPE =
  'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity'

/** RFC 9457's media type for problem details in JSON. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/**
 * A denial's fields for an app that answers it itself (`onLimited`): all but `Content-Type`,
 * which labels the default problem body and would mislabel a body of the app's own (Express's
 * `res.json` and Koa keep a Content-Type already set).
 */
export function fieldsForOwnAnswer(
  headers: ReadonlyArray<readonly [string, string]>,
): Array<readonly [string, string]> {
  return headers.filter(([name]) => name !== 'Content-Type')
}

/** The body of every response Tollgate refuses a request with (`application/problem+json`). */
export type ProblemDetails = {
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
export type ViolatedPolicy = { readonly name: string; readonly description: string }

/** 429: the request exceeds one or more enforcing rules. */
function quotaExceededProblem(
  violated: readonly ViolatedPolicy[],
  retryAfter: number,
): ProblemDetails {
  const which = violated.map((p) => `"${p.name}" (${p.description})`).join(', ')
  const policies = violated.length === 1 ? 'policy' : 'policies'
  return {
    type: QUOTA_EXCEEDED_TYPE,
    title: 'Quota Exceeded',
    status: 429,
    detail: `Too many requests for the rate-limit ${policies} ${which}. Retry after ${retryAfter} s.`,
    'violated-policies': violated.map((p) => p.name),
    retryAfter,
  }
}

/** A retry time no real denial has, standing in for the figure while a template is made. */
const RETRY_PLACEHOLDER = 918_273_645_546

/**
 * The 429 problem and its JSON text. For one violated policy (the usual case) the text is
 * assembled from pieces cached per policy, since only the retry seconds change between denials:
 * several times cheaper than `JSON.stringify` on every 429 of a flood.
 */
export function createQuotaExceededBodies(): (
  violated: readonly ViolatedPolicy[],
  retryAfter: number,
) => { readonly problem: ProblemDetails; readonly body: string } {
  const templates = new WeakMap<ViolatedPolicy, readonly string[] | null>()
  return function quotaExceeded(violated, retryAfter) {
    const problem = quotaExceededProblem(violated, retryAfter)
    const policy = violated.length === 1 ? violated[0]! : undefined
    let pieces = policy === undefined ? null : templates.get(policy)
    if (policy !== undefined && pieces === undefined) {
      const json = JSON.stringify(quotaExceededProblem(violated, RETRY_PLACEHOLDER))
      const split = json.split(String(RETRY_PLACEHOLDER))
      pieces = split.length === 3 ? split : null
      templates.set(policy, pieces)
    }
    if (pieces === null || pieces === undefined) return { problem, body: JSON.stringify(problem) }
    const seconds = String(retryAfter)
    return { problem, body: pieces[0] + seconds + pieces[1] + seconds + pieces[2] }
  }
}

/** 503: the store failed and a fail-closed rule matched. */
export function storeUnavailableProblem(
  policies: readonly string[],
  retryAfter: number,
): ProblemDetails {
  return {
    type: TEMPORARY_REDUCED_CAPACITY_TYPE,
    title: 'Temporary Reduced Capacity',
    status: 503,
    detail: `Rate limits cannot be checked right now, and this endpoint does not serve requests unchecked. Retry after ${retryAfter} s.`,
    ...(policies.length === 0 ? {} : { 'violated-policies': policies }),
    retryAfter,
  }
}

/** 503: the server sheds load (`shed`): too busy to take the request now. */
export function loadShedProblem(retryAfter: number): ProblemDetails {
  return {
    type: TEMPORARY_REDUCED_CAPACITY_TYPE,
    title: 'Temporary Reduced Capacity',
    status: 503,
    detail: `The server is too busy to take this request now. Retry after ${retryAfter} s.`,
    retryAfter,
    code: 'load-shed',
  }
}

const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
}

/** 400 (or 401/403 as configured): a rule keys on an identity the request does not carry. */
export function missingIdentityProblem(status: 400 | 401 | 403): ProblemDetails {
  return {
    type: 'about:blank',
    title: STATUS_TITLES[status]!,
    status,
    detail:
      'This endpoint is rate-limited per client identity (such as an API key or a signed-in user), and the request carries none.',
    code: 'missing-identity',
  }
}

/** 403: the client is on the limiter's `denyList`; no rule was consulted, so no Retry-After. */
export function denyListedProblem(): ProblemDetails {
  return {
    type: 'about:blank',
    title: 'Forbidden',
    status: 403,
    detail: 'This client is not allowed to use this API.',
    code: 'deny-listed',
  }
}

/**
 * 403: a rule's penalty blocks the client, whose offences reached the rule's `forbidAfter`. The
 * block still ends: `retryAfter` (and `Retry-After`) say when.
 */
export function penaltyForbiddenProblem(
  policies: readonly string[],
  retryAfter: number,
): ProblemDetails {
  return {
    type: 'about:blank',
    title: 'Forbidden',
    status: 403,
    detail: `Blocked after repeated requests over the rate limit. Retry after ${retryAfter} s.`,
    'violated-policies': policies,
    retryAfter,
    code: 'penalty-forbidden',
  }
}

/** 400: a request whose cost exceeds a rule's capacity; it can never pass, so no Retry-After. */
export function costExceedsCapacityProblem(rule: string | undefined): ProblemDetails {
  const which = rule === undefined ? 'a rate-limit rule' : `the rate-limit rule "${rule}"`
  return {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: `This request costs more than ${which} allows at once, so it can never be served; split it into smaller requests.`,
    code: 'ERR_RL_COST_EXCEEDS_CAPACITY',
  }
}
