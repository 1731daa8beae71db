import type { HeaderEntries } from './types.js'

/**
 * Writing fields onto a response that already carries some of them: another Tollgate
 * middleware earlier in the chain (a global limit, then a login limit), or the app. List fields
 * (`RateLimit-Policy`, the current `RateLimit`, `Access-Control-Expose-Headers`) take one more
 * member each. Single-valued ones cannot: `X-RateLimit-Remaining: 99, 0` is unreadable. Their
 * fields describe one rule together, so a whole group is kept or replaced: a denial's wins over
 * an admission's, and otherwise the description with fewer requests remaining, then the later
 * reset, then the lower limit; `Retry-After` keeps the longer wait. Two stacked middlewares then send the same fields in either order
 * (Express and Koa write before the app runs, Hono after).
 */

/** How a field is put on a response that may already carry it. */
export type FieldWrite = 'set' | 'append'

/** Reads a field by lower-case name: a response's, or the entries to merge; undefined when absent. */
type Read = (lowerCaseName: string) => string | undefined

/** The writes that put entries onto a response that may already carry some of them. */
export type MergeFields = (
  entries: HeaderEntries,
  existing: Read,
) => Array<readonly [name: string, value: string, write: FieldWrite]>

/**
 * Single-valued fields that describe one rule together (`X-RateLimit-*`, draft-6's three
 * Integers, draft-7's `RateLimit`): kept or replaced as a whole. Each is carried by the family
 * that sends it, so merging knows only the groups a middleware's families can send.
 */
export type FieldGroup = {
  /** True for an entry of the group, by lower-case name and value. */
  readonly has: (lower: string, value: string) => boolean
  /**
   * True when the group on the response (`existing`) wins over that of `entries`: a denial's
   * (`denied`, `denies`: whether each carries `Retry-After`) over an admission's, else the one
   * with fewer requests remaining, then the later reset, then the lower limit.
   */
  readonly keeps: (
    existing: Read,
    entries: HeaderEntries,
    denies: boolean,
    denied: boolean,
  ) => boolean
}

const DRAFT_7 = 'ratelimit'
const POLICY = 'ratelimit-policy'
const RETRY_AFTER = 'retry-after'

/**
 * True for the fields that hold one value, by the names core writes them with: an adapter that
 * adds fields to a response which may already carry them (Hono, after the handler) sets these
 * rather than appending, since `X-RateLimit-Remaining: 4999, 9` is unreadable. A `switch` on the
 * name as written: no lower-casing and no lookup on the request path; field-merge.test.ts checks
 * that it names the families' `singleValued` fields, `Retry-After` and `Content-Type`.
 */
export function isSingleValuedName(name: string): boolean {
  switch (name) {
    case 'X-RateLimit-Limit':
    case 'X-RateLimit-Remaining':
    case 'X-RateLimit-Reset':
    case 'RateLimit-Limit':
    case 'RateLimit-Remaining':
    case 'RateLimit-Reset':
    case 'Retry-After':
    case 'Content-Type':
      return true
    default:
      return false
  }
}

type Figures = { readonly remaining: number; readonly reset: number; readonly limit: number }

/**
 * A group whose figures `figures` reads, and whose presence on a response the field `key` shows.
 * A denial's figures describe the rule that denied, which Retry-After answers for: they win
 * over an admission's, whatever either has remaining.
 */
function group(
  key: string,
  has: FieldGroup['has'],
  figures: (read: Read) => Figures | undefined,
): FieldGroup {
  return {
    has,
    keeps(existing, entries, denies, denied) {
      // The entries' own value of a field, the last if they name it twice.
      const ours: Read = (lower) => {
        let value: string | undefined
        for (const [name, text] of entries) if (name.toLowerCase() === lower) value = text
        return value
      }
      return denies === denied
        ? keepsExisting(figures(existing), figures(ours))
        : denied && existing(key) !== undefined
    },
  }
}

/** Three Integer fields, `<prefix>limit`, `<prefix>remaining` and `<prefix>reset`. */
function integerGroup(prefix: string): FieldGroup {
  const limit = `${prefix}limit`
  const remaining = `${prefix}remaining`
  const reset = `${prefix}reset`
  return group(
    remaining,
    (lower) => lower === limit || lower === remaining || lower === reset,
    (read) => figures(read(remaining), read(reset), read(limit)),
  )
}

/** `X-RateLimit-Limit`, `-Remaining`, `-Reset`. */
export const X_RATE_LIMIT_GROUP = /* @__PURE__ */ integerGroup('x-ratelimit-')
/** Draft 6's `RateLimit-Limit`, `-Remaining`, `-Reset`. */
export const DRAFT_6_GROUP = /* @__PURE__ */ integerGroup('ratelimit-')
/** Draft 7's `RateLimit: limit=100, remaining=50, reset=30`, one value for the three figures. */
export const DRAFT_7_GROUP = /* @__PURE__ */ group(
  DRAFT_7,
  (lower, value) => lower === DRAFT_7 && value.startsWith('limit='),
  (read) => {
    const value = read(DRAFT_7) ?? ''
    const param = (key: string) => new RegExp(`(?:^|,)\\s*${key}=(\\d+)`).exec(value)?.[1]
    return figures(param('remaining'), param('reset'), param('limit'))
  },
)

/**
 * The writes that put `entries` onto a response that may already carry some of them, read
 * through `existing` (by lower-case name; undefined when absent), for fields of any family.
 * Entries of a group that loses to what the response carries are left out; `Content-Type` is
 * replaced.
 */
export function mergeFields(
  entries: HeaderEntries,
  existing: Read,
): Array<readonly [name: string, value: string, write: FieldWrite]> {
  return mergeGroups([X_RATE_LIMIT_GROUP, DRAFT_6_GROUP, DRAFT_7_GROUP], entries, existing)
}

/** `mergeFields` knowing only `groups`: those of the families whose fields `entries` hold. */
export function mergeGroups(
  groups: readonly FieldGroup[],
  entries: HeaderEntries,
  existing: Read,
): Array<readonly [name: string, value: string, write: FieldWrite]> {
  const writes: Array<readonly [string, string, FieldWrite]> = []
  const denies = entries.some(([name]) => name.toLowerCase() === RETRY_AFTER)
  const denied = existing(RETRY_AFTER) !== undefined
  for (const [name, value] of entries) {
    const lower = name.toLowerCase()
    const group = groups.find((candidate) => candidate.has(lower, value))
    const theirs = lower === DRAFT_7 || lower === POLICY ? existing(lower) : undefined
    if (theirs !== undefined && isCurrentForm(theirs) !== isCurrentForm(value)) {
      // Two middlewares configured with different drafts: one field cannot hold both forms (a
      // draft-7 Dictionary and a current-form List do not parse as one field). The denial's is
      // kept, as for every group; between two admissions or two denials, the current form.
      if (denies !== denied ? denies : isCurrentForm(value)) writes.push([name, value, 'set'])
    } else if (group !== undefined) {
      if (!group.keeps(existing, entries, denies, denied)) writes.push([name, value, 'set'])
    } else if (lower === RETRY_AFTER) {
      if (!(Number(existing(RETRY_AFTER)) >= Number(value))) writes.push([name, value, 'set'])
    } else writes.push([name, value, lower === 'content-type' ? 'set' : 'append'])
  }
  return writes
}

/** True when the response's figures are at least as restrictive as the new ones. */
function keepsExisting(current: Figures | undefined, next: Figures | undefined): boolean {
  if (current === undefined || next === undefined) return false
  if (current.remaining !== next.remaining) return current.remaining < next.remaining
  if (current.reset !== next.reset) return current.reset > next.reset
  return current.limit <= next.limit
}

/**
 * The current drafts' `RateLimit` and `RateLimit-Policy` are Lists of named members
 * (`"per-ip";r=5;t=1`); draft-6/7's are a Dictionary or Items of figures (`limit=10, …`, `10;w=1`).
 */
function isCurrentForm(value: string): boolean {
  return value.trimStart().startsWith('"')
}

/** Figures that are all whole numbers, or undefined (a value nobody can compare is replaced). */
function figures(
  remaining: string | undefined,
  reset: string | undefined,
  limit: string | undefined,
): Figures | undefined {
  const parsed = { remaining: Number(remaining), reset: Number(reset), limit: Number(limit) }
  const whole = (text: string | undefined) => text !== undefined && /^\d+$/.test(text.trim())
  return whole(remaining) && whole(reset) && whole(limit) ? parsed : undefined
}
