import { shown } from '../options/option-values.js'
import { nearestOption } from '../options/unknown-options.js'
import type { IssueSink } from './issues.js'
import { HTTP_METHODS } from './route.js'
import type { RuleMatch } from './types.js'
import type { RouteReader } from './validate-routes.js'

const MATCH_FIELDS = ['identity', 'plan', 'method', 'route'] as const

const IDENTITY_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/

/**
 * Validates a rule's `match`, reporting each problem to `issue`; returns it normalised (to be
 * used only when nothing was reported), or undefined when it is missing or not an object.
 * `anyIdentity`: a rule that may key on nothing (a concurrency rule for the whole process).
 * Routes are read by `routes` (see `RouteReader`).
 */
export function validateMatch(
  value: unknown,
  issue: IssueSink,
  anyIdentity: boolean,
  routes: RouteReader,
): RuleMatch | undefined {
  if (!isRecord(value)) {
    issue('match', `expected an object such as { identity: 'ip' }, got ${shown(value)}`)
    return undefined
  }
  refuseUnknownFields(value, MATCH_FIELDS, (field, problem) => issue(`match.${field}`, problem))
  const given = value as { readonly [K in (typeof MATCH_FIELDS)[number]]?: unknown }
  const list = (field: (typeof MATCH_FIELDS)[number], check: ItemCheck) =>
    listOf(given[field], `match.${field}`, issue, check)
  let identity: string[] | undefined = []
  if (given.identity !== undefined) {
    identity = list('identity', identityNameProblem)
    if (identity !== undefined && new Set(identity).size !== identity.length) {
      issue('match.identity', 'names an identity twice')
    }
  } else if (!anyIdentity) {
    issue('match.identity', 'required: ip, api_key, user or your own')
  }
  const plan = list('plan', (plan) => (plan === '' ? 'empty plan name' : undefined))
  const method = list('method', (method) =>
    HTTP_METHODS.includes(method.toUpperCase()) ? undefined : `unknown method ${shown(method)}`,
  )?.map((name) => name.toUpperCase())
  const route = list('route', (route) => routes.checkRoute(route, method))?.map(
    (text) => (routes.parseRoute(text) as { text: string }).text,
  )
  return definedOnly({
    identity,
    plan: plan && unique(plan),
    method: method && unique(method),
    route: route && unique(route),
  }) as RuleMatch
}

/** `record` without the fields whose value is undefined. */
export function definedOnly<T extends Record<string, unknown>>(record: T): T {
  for (const field in record) if (record[field] === undefined) delete record[field]
  return record
}

export function identityNameProblem(name: string): string | undefined {
  if (!IDENTITY_NAME.test(name)) {
    return `expected an identity name matching ${IDENTITY_NAME}, got ${shown(name)}`
  }
  // Identities are looked up by name on a plain object, where these names find the built-in
  // every object inherits instead of a value: all requests would share one key.
  if (name in Object.prototype) {
    return `reserved identity name ${shown(name)}`
  }
  return undefined
}

/** The problem with one item of a list, or undefined. */
type ItemCheck = (item: string) => string | undefined

/**
 * A string or a non-empty list of strings, as a list; undefined when absent or invalid
 * (reported).
 */
function listOf(
  value: unknown,
  field: string,
  issue: IssueSink,
  check: ItemCheck,
): string[] | undefined {
  if (value === undefined) return undefined
  const items = typeof value === 'string' ? [value] : value
  // Not a list, or a list of something else: refused once, showing the value.
  const expected = `expected a string or a non-empty list of strings, got ${shown(value)}`
  if (!Array.isArray(items) || items.length === 0) {
    issue(field, expected)
    return undefined
  }
  let ok = true
  for (const item of items) {
    const problem = typeof item === 'string' ? check(item) : expected
    if (problem !== undefined) {
      ok = false
      issue(field, problem)
    }
  }
  return ok ? (items as string[]) : undefined
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)]
}

/**
 * Reports each field of `record` that `known` lacks (one whose value is undefined is not
 * given), with the closest known one: a field of the other rule shape is answered with its
 * counterpart in `hints`.
 */
export function refuseUnknownFields(
  record: object,
  known: readonly string[],
  issue: IssueSink,
  hints: Readonly<Record<string, string>> = {},
): void {
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined || known.includes(field)) continue
    issue(field, unknownField(field, known, ownValue(hints, field)))
  }
}

export function unknownField(field: string, known: readonly string[], hint?: string): string {
  return `unknown field; ${nearestOption(field, known, 'field', hint)}`
}

/**
 * `record[key]` when `record` has it itself: a name such as `constructor` or `__proto__` finds
 * what every object inherits (a function, `Object.prototype`) in a plain lookup.
 */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
