import type { HeaderEntries } from '@tollgate/core/adapter'
import type { Context } from 'hono'

// How the edge entry puts its fields on a Hono response: as `ResponseFields` does for the forms
// the edge entry writes (`X-RateLimit-*`, the current `RateLimit` and `RateLimit-Policy`,
// `Retry-After`), merging with another edge middleware's as `mergeFields` does, so that stacked
// middlewares (a global limit, then a login limit) answer as `@tollgate/hono`'s do.

/** Set on a context once an edge middleware has put its fields on the response. */
const WRITTEN = Symbol('tollgate.edgeFieldsWritten')
type Marked = Context & { [WRITTEN]?: true }

const LEGACY = ['x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-limit']
const SINGLE = [...LEGACY, 'retry-after', 'content-type']

function put(target: Headers, name: string, value: string, set: boolean): void {
  if (set || SINGLE.includes(name.toLowerCase())) target.set(name, value)
  else target.append(name, value)
}

/** A denial's fields, set with `c.header` for the response Hono is about to build. */
export function setDenialFields(c: Context, entries: HeaderEntries): void {
  for (const [name, value] of entries) {
    c.header(name, value, SINGLE.includes(name.toLowerCase()) ? undefined : { append: true })
  }
  ;(c as Marked)[WRITTEN] = true
}

/**
 * Appends an admission's fields to the finished response (on a mutable copy when its headers
 * are immutable); onto another edge middleware's, merged (see `merged`).
 */
export function putFields(c: Context, entries: HeaderEntries): void {
  if (entries.length === 0) return
  const writes = (c as Marked)[WRITTEN] ? merged(c.res.headers, entries) : entries
  const set = writes !== entries
  try {
    for (const [name, value] of writes) put(c.res.headers, name, value, set)
  } catch {
    // An immutable response (`Response.redirect`, straight from `fetch`): send a mutable copy.
    c.res = new Response(c.res.body, c.res)
    for (const [name, value] of writes) put(c.res.headers, name, value, set)
  }
  ;(c as Marked)[WRITTEN] = true
}

/**
 * The values to set for an admission's `entries` over the fields already on `headers`, which
 * an inner middleware wrote: list members of this one go first; the `X-RateLimit-*` of one rule
 * are kept or replaced together: a denial's are kept, else those with fewer remaining, then the
 * later reset, then the lower limit.
 */
function merged(headers: Headers, entries: HeaderEntries): Array<readonly [string, string]> {
  const theirs = (name: string) => headers.get(name) ?? undefined
  const ours = new Map(entries.map(([name, value]) => [name.toLowerCase(), value]))
  const figures = (read: (name: string) => string | undefined) =>
    LEGACY.map((name) => {
      const text = read(name)
      return text !== undefined && /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN
    })
  const [r1, t1, l1] = figures(theirs) as [number, number, number]
  const [r2, t2, l2] = figures((name) => ours.get(name)) as [number, number, number]
  const keep =
    theirs('retry-after') === undefined
      ? [r1, t1, l1, r2, t2, l2].every((n) => !Number.isNaN(n)) &&
        (r1 !== r2 ? r1 < r2 : t1 !== t2 ? t1 > t2 : l1 <= l2)
      : theirs('x-ratelimit-remaining') !== undefined
  return entries.flatMap(([name, value]): Array<readonly [string, string]> => {
    const lower = name.toLowerCase()
    const existing = theirs(lower)
    if (LEGACY.includes(lower)) return keep ? [] : [[name, value]]
    return [[name, existing === undefined ? value : `${value}, ${existing}`]]
  })
}

/**
 * The app's own answer to a denial, with the fields it lacks added (on a copy when its headers
 * are immutable); anything that is not a Response is passed on as it is, for Hono to judge.
 */
export function withDenialFields(answer: Response, fields: HeaderEntries): Response {
  if (!(answer instanceof Response)) return answer
  const missing = fields.filter(([name]) => !answer.headers.has(name))
  let target = answer
  try {
    for (const [name, value] of missing) put(target.headers, name, value, false)
  } catch {
    target = new Response(answer.body, answer)
    for (const [name, value] of missing) put(target.headers, name, value, false)
  }
  return target
}
