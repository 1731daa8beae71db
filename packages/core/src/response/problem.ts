/**
 * RFC 9457 problem details for the responses Tollgate sends itself. The two problem types come
 * from draft-ietf-httpapi-ratelimit-headers (§5; the draft asks IANA to register them); the
 * others use `about:blank`, whose title is the status phrase, plus a `code`.
 */

/** The draft's problem types (§5): `#quota-exceeded` (429), `#temporary-reduced-capacity` (503). */
const DRAFT_TYPES = 'https://iana.org/assignments/http-problem-types#'

/** RFC 9457's media type for problem details in JSON. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

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

/**
 * A violated policy, named and described for the `detail` text, keeping the JSON text of its
 * last 429 problem (see `PolicyFields`).
 */
export type ViolatedPolicy = {
  readonly name: string
  readonly description: string
  quotaBody: readonly [retryAfter: number, body: string] | undefined
}

/**
 * Every problem Tollgate sends, in one shape: its type and title follow from the status; with
 * `retryAfter`, the detail ends by saying when to retry. Members are added in the order the
 * body lists them, only when given.
 */
export function problem(
  status: 400 | 401 | 403 | 429 | 503,
  detail: string,
  code?: string,
  retryAfter?: number,
  policies?: readonly string[],
): ProblemDetails {
  // The draft's problem types' titles (429, 503), else the status phrase.
  const title =
    status < 401
      ? 'Bad Request'
      : status < 403
        ? 'Unauthorized'
        : status < 429
          ? 'Forbidden'
          : status < 503
            ? 'Quota Exceeded'
            : 'Temporary Reduced Capacity'
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
export function quotaExceededProblem(
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

/**
 * The JSON text of `problem`, the 429 of `violated` (`quotaExceededProblem`). For one violated
 * policy (the usual case) the text of its last 429 is kept with it (`quotaBody`) and sent again
 * while the retry seconds are the same, as they are for most of a flood (a bucket refilling
 * faster than once a second always answers 1 s): no `JSON.stringify` on those 429s.
 */
export function quotaExceededBody(
  violated: readonly ViolatedPolicy[],
  retryAfter: number,
  problem: ProblemDetails,
): string {
  const policy = violated.length === 1 ? violated[0] : undefined
  const last = policy?.quotaBody
  if (last?.[0] === retryAfter) return last[1]
  const body = JSON.stringify(problem)
  if (policy !== undefined) policy.quotaBody = [retryAfter, body]
  return body
}

/** 503 `detail`: the store failed and a fail-closed rule matched. */
export const STORE_UNAVAILABLE =
  'Rate limits cannot be checked right now, and this endpoint does not serve requests unchecked.'

/** 503: the server sheds load (`shed`): too busy to take the request now. */
export function loadShedProblem(retryAfter: number): ProblemDetails {
  return problem(503, 'The server is too busy to take this request now.', 'load-shed', retryAfter)
}

/** 400 (or 401/403 as configured) `detail`: a rule keys on an identity the request lacks. */
export const MISSING_IDENTITY =
  'This endpoint is rate-limited per client identity (such as an API key or a signed-in user), and the request carries none.'

/** 400: a request whose cost exceeds a rule's capacity; it can never pass, so no Retry-After. */
export function costExceedsCapacityProblem(rule: string | undefined): ProblemDetails {
  const which = rule === undefined ? 'a rate-limit rule' : `the rate-limit rule "${rule}"`
  return problem(
    400,
    `This request costs more than ${which} allows at once, so it can never be served; split it into smaller requests.`,
    'ERR_RL_COST_EXCEEDS_CAPACITY',
  )
}
