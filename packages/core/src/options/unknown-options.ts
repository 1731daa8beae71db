import { RateLimitError } from '../errors.js'
import { closest } from '../rules/issues.js'

/**
 * What users of express-rate-limit write, and where Tollgate says it. Options that exist in
 * both (`store`, `skip`, `legacyHeaders`, `standardHeaders`) are not listed.
 */
const EXPRESS_RATE_LIMIT: Readonly<Record<string, string>> = {
  windowMs:
    "express-rate-limit's windowMs is a rule's window here, with its unit: rules such as [{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 100, window: '15m' }]",
  max: "express-rate-limit's max is a rule's limit here: rules such as [{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 100, window: '15m' }]",
  limit:
    "express-rate-limit's limit is a rule's limit here: rules such as [{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 100, window: '15m' }]",
  keyGenerator:
    "rules key on identities instead of a keyGenerator: a rule's match.identity ('ip', 'api_key', 'user', or a name of your own that the identities hook returns and customIdentities declares)",
  handler: "express-rate-limit's handler is onLimited here",
  message: 'the denial is an RFC 9457 problem body; to send your own, use onLimited',
  statusCode:
    'the denial is a 429 (503 when the store fails closed); to send another, use onLimited',
  skipFailedRequests: "express-rate-limit's skipFailedRequests is refund: 'failed' here",
  skipSuccessfulRequests: "express-rate-limit's skipSuccessfulRequests is refund: 'succeeded' here",
  requestWasSuccessful:
    'refund takes a function of the status and the request: refund: (status, req) => …',
  passOnStoreError: "each rule says what a store failure does: onStoreError: 'open' (or 'closed')",
  validate: 'checks that warn can be switched off one by one with ignoreWarnings: [code, …]',
  headers:
    'headers are chosen with standardHeaders (a draft, or false) and legacyHeaders (true or false)',
  draft_polli_ratelimit_headers: "standardHeaders: 'draft-6' sends those headers",
  identifier: "a rule's id names its policy in the headers",
  requestPropertyName:
    'the verdict is passed to onLimited and onShadowDenied, not put on the request',
}

/** Values that other rate limiters accept for an option Tollgate has too. */
const VALUE_HINTS: Readonly<Record<string, (value: unknown) => string | undefined>> = {
  standardHeaders: (value) =>
    value === true
      ? "standardHeaders: true is express-rate-limit's; Tollgate sends the current draft ('draft-11') by default: remove the option, or name a draft ('draft-6' … 'draft-11')"
      : undefined,
}

/**
 * Refuses, at start-up, every option that `where` does not know: from JavaScript a misspelt or
 * foreign option (`trustproxy`, `windowMs`) would otherwise change nothing and say nothing.
 * Each is named with the closest known option, or with the Tollgate equivalent of
 * express-rate-limit's. `undefined` values count as not given. Also refuses
 * express-rate-limit's values of shared options (`standardHeaders: true`).
 */
export function refuseUnknownOptions(
  options: object,
  known: readonly string[],
  where: string,
): void {
  const names = [...new Set(known)]
  const problems: { readonly field: string; readonly text: string }[] = []
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue
    if (known.includes(name)) {
      const hint = Object.hasOwn(VALUE_HINTS, name) ? VALUE_HINTS[name]!(value) : undefined
      if (hint !== undefined) problems.push({ field: name, text: hint })
      continue
    }
    problems.push({ field: name, text: `unknown option "${name}": ${suggestion(name, names)}` })
  }
  if (problems.length === 0) return
  const lines = problems.map((problem) => problem.text)
  const message =
    lines.length === 1 ? lines[0]! : `${lines.length} problems:\n  ${lines.join('\n  ')}`
  throw new RateLimitError('ERR_RL_INVALID_RULE', `${where}: ${message}`, {
    field: problems[0]!.field,
  })
}

function suggestion(name: string, known: readonly string[]): string {
  if (Object.hasOwn(EXPRESS_RATE_LIMIT, name) && !known.includes(name)) {
    return EXPRESS_RATE_LIMIT[name]!
  }
  const guess = closest(name, known)
  return guess === undefined ? `known options: ${known.join(', ')}` : `did you mean "${guess}"?`
}
