import { closest } from '../closest-name.js'
import { nearestOption } from './unknown-options.js'

/**
 * Options of other rate limiters that their users write here, with what Tollgate says instead:
 * `unknown` answers an option Tollgate does not know (one of `names`, or a typo of one), `value`
 * a value another limiter gives an option Tollgate has too. Kept apart so that the lean entries,
 * which pass none, bundle none of these texts or their look-ups.
 */
export type ForeignOptions = {
  /** The other limiters' option names, with what Tollgate says of each. */
  readonly names: Readonly<Record<string, string>>
  /** What to say of `name`, which is none of `known`. */
  readonly unknown: (name: string, known: readonly string[]) => string
  /** What to say of `value` given to `name`, an option Tollgate has too, if it is another's. */
  readonly value: (name: string, value: unknown) => string | undefined
}

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
 * An unknown option answered with express-rate-limit's name where it is one; its names are
 * candidates for a typo too: `windwoMs` is a typo of `windowMs`, and its answer says where that
 * lives here.
 */
function unknownOption(name: string, known: readonly string[]): string {
  if (Object.hasOwn(EXPRESS_RATE_LIMIT, name)) return EXPRESS_RATE_LIMIT[name]!
  const others = Object.keys(EXPRESS_RATE_LIMIT).filter((other) => !known.includes(other))
  const guess = closest(name, [...known, ...others])
  if (guess === undefined || known.includes(guess)) return nearestOption(name, known)
  return `did you mean "${guess}"? ${EXPRESS_RATE_LIMIT[guess]!}`
}

/** express-rate-limit's options and values, for `refuseUnknownOptions`. */
export const FOREIGN_OPTIONS: ForeignOptions = {
  names: EXPRESS_RATE_LIMIT,
  unknown: unknownOption,
  value: (name, value) =>
    Object.hasOwn(VALUE_HINTS, name) ? VALUE_HINTS[name]!(value) : undefined,
}
