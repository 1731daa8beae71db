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

/** Single-valued fields of one rule: draft-7's `RateLimit` has its three figures in one value. */
type Group = { readonly limit: string; readonly remaining: string; readonly reset: string }

const LEGACY: Group = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  reset: 'x-ratelimit-reset',
}
const DRAFT_6_GROUP: Group = {
  limit: 'ratelimit-limit',
  remaining: 'ratelimit-remaining',
  reset: 'ratelimit-reset',
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
 * The writes that put `entries` onto a response that may already carry some of them, read
 * through `existing` (by lower-case name; undefined when absent). Entries of a group that loses
 * to what the response carries are left out; `Content-Type` is replaced.
 */
export function mergeFields(
  entries: HeaderEntries,
  existing: (lowerCaseName: string) => string | undefined,
): Array<readonly [name: string, value: string, write: FieldWrite]> {
  const writes: Array<readonly [string, string, FieldWrite]> = []
  // A denial's figures describe the rule that denied, which Retry-After answers for: they win
  // over an admission's, whatever either has remaining.
  const denies = entries.some(([name]) => name.toLowerCase() === RETRY_AFTER)
  const denied = existing(RETRY_AFTER) !== undefined
  const keeps = (group: Group) =>
    denies === denied
      ? keepsExisting(groupFigures(group, existing), entryFigures(group, entries))
      : denied && existing(group.remaining) !== undefined
  const keepsLegacy = keeps(LEGACY)
  const keepsDraft6 = keeps(DRAFT_6_GROUP)
  for (const [name, value] of entries) {
    const lower = name.toLowerCase()
    if (isMember(LEGACY, lower)) {
      if (!keepsLegacy) writes.push([name, value, 'set'])
    } else if (isMember(DRAFT_6_GROUP, lower)) {
      if (!keepsDraft6) writes.push([name, value, 'set'])
    } else if ((lower === DRAFT_7 || lower === POLICY) && formsDiffer(existing(lower), value)) {
      // Two middlewares configured with different drafts: one field cannot hold both forms (a
      // draft-7 Dictionary and a current-form List do not parse as one field). The denial's is
      // kept, as for every group; between two admissions or two denials, the current form.
      if (denies !== denied ? denies : isCurrentForm(value)) writes.push([name, value, 'set'])
    } else if (lower === DRAFT_7 && isDraft7Value(value)) {
      const current = existing(DRAFT_7)
      const kept =
        current !== undefined &&
        (denies === denied ? keepsExisting(draft7Figures(current), draft7Figures(value)) : denied)
      if (!kept) writes.push([name, value, 'set'])
    } else if (lower === RETRY_AFTER) {
      const current = Number(existing(RETRY_AFTER))
      if (!(current >= Number(value))) writes.push([name, value, 'set'])
    } else {
      writes.push([name, value, lower === 'content-type' ? 'set' : 'append'])
    }
  }
  return writes
}

function isMember(group: Group, lower: string): boolean {
  return lower === group.limit || lower === group.remaining || lower === group.reset
}

/** True when the response's figures are at least as restrictive as the new ones. */
function keepsExisting(current: Figures | undefined, next: Figures | undefined): boolean {
  if (current === undefined || next === undefined) return false
  if (current.remaining !== next.remaining) return current.remaining < next.remaining
  if (current.reset !== next.reset) return current.reset > next.reset
  return current.limit <= next.limit
}

function groupFigures(group: Group, read: (name: string) => string | undefined) {
  return figures(read(group.remaining), read(group.reset), read(group.limit))
}

function entryFigures(group: Group, entries: HeaderEntries): Figures | undefined {
  let remaining: string | undefined
  let reset: string | undefined
  let limit: string | undefined
  for (const [name, value] of entries) {
    const lower = name.toLowerCase()
    if (lower === group.remaining) remaining = value
    else if (lower === group.reset) reset = value
    else if (lower === group.limit) limit = value
  }
  return figures(remaining, reset, limit)
}

/**
 * The current drafts' `RateLimit` and `RateLimit-Policy` are Lists of named members
 * (`"per-ip";r=5;t=1`); draft-6/7's are a Dictionary or Items of figures (`limit=10, …`, `10;w=1`).
 */
function isCurrentForm(value: string): boolean {
  return value.trimStart().startsWith('"')
}

function formsDiffer(current: string | undefined, next: string): boolean {
  return current !== undefined && isCurrentForm(current) !== isCurrentForm(next)
}

/** Draft-7: `limit=100, remaining=50, reset=30`. */
function isDraft7Value(value: string): boolean {
  return value.startsWith('limit=')
}

function draft7Figures(value: string): Figures | undefined {
  const param = (key: string) => new RegExp(`(?:^|,)\\s*${key}=(\\d+)`).exec(value)?.[1]
  return figures(param('remaining'), param('reset'), param('limit'))
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
