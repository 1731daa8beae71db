import type { Denial, Verdict } from '@tollgate/core'
import {
  type Exchange,
  type FieldSink,
  type FieldWriter,
  type HeaderEntries,
  isSingleValuedName,
  mergeFields,
  type WriteVerdictFields,
} from '@tollgate/core/adapter'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/**
 * Set on a context once a Tollgate middleware has put its fields on the response: a second one
 * (further out, so writing later) merges its fields with them rather than appending, as
 * `mergeFields` says. A mark, rather than reading the fields back on every response, because
 * reading a `Headers` costs about what writing one field does.
 */
const FIELDS_WRITTEN = Symbol('tollgate.fieldsWritten')

type MarkedContext = Context & { [FIELDS_WRITTEN]?: true }

function markFieldsWritten(c: Context): void {
  ;(c as MarkedContext)[FIELDS_WRITTEN] = true
}

/**
 * Puts a denial's fields on the response Hono is about to build (`c.header`), and marks `c`
 * as carrying them (see `FIELDS_WRITTEN`).
 */
function setDenialFields(c: Context, entries: HeaderEntries): void {
  for (let i = 0; i < entries.length; i++) {
    const name = entries[i]![0]
    c.header(name, entries[i]![1], isSingleValuedName(name) ? undefined : { append: true })
  }
  markFieldsWritten(c)
}

function hasFieldsWritten(c: Context): boolean {
  return (c as MarkedContext)[FIELDS_WRITTEN] === true
}

function write(target: Headers, name: string, value: string): void {
  if (isSingleValuedName(name)) target.set(name, value)
  else target.append(name, value)
}

/**
 * Appends the rate-limit fields to the finished response. Done after `next()` rather than with
 * `c.header` before it, so that handlers returning a `Response` of their own (which drops
 * headers set earlier) carry them as well.
 */
function appendHeaders(c: Context, headers: HeaderEntries): void {
  if (headers.length === 0) return
  if (hasFieldsWritten(c)) {
    writeMerged(c, headers)
    return
  }
  const target = appendFirst(c, headers[0]![0], headers[0]![1])
  for (let i = 1; i < headers.length; i++) write(target, headers[i]![0], headers[i]![1])
  markFieldsWritten(c)
}

/**
 * Writes fields onto a response that carries another Tollgate middleware's. That one ran inside
 * this one (Hono writes after `next()`), so this middleware's list members go first: the order
 * Express and Koa give, where the outer middleware writes first.
 */
function writeMerged(c: Context, headers: HeaderEntries): void {
  const existing = (name: string) => c.res.headers.get(name) ?? undefined
  const fields = new Map<string, { name: string; ours: string; theirs: string | undefined }>()
  for (const [name, value, write] of mergeFields(headers, existing)) {
    const lower = name.toLowerCase()
    const field = fields.get(lower)
    if (write === 'set') fields.set(lower, { name, ours: value, theirs: undefined })
    else if (field !== undefined) field.ours += `, ${value}`
    else fields.set(lower, { name, ours: value, theirs: existing(lower) })
  }
  let target: Headers | undefined
  for (const { name, ours, theirs } of fields.values()) {
    const value = theirs === undefined ? ours : `${ours}, ${theirs}`
    if (target === undefined) target = appendFirst(c, name, value, true)
    else target.set(name, value)
  }
}

/**
 * Writes the first field (set when single-valued or `replace`, else appended), and returns the
 * headers to write the others to.
 */
function appendFirst(c: Context, name: string, value: string, replace = false): Headers {
  let target = c.res.headers
  try {
    if (replace) target.set(name, value)
    else write(target, name, value)
  } catch {
    // An immutable response (`Response.redirect`, straight from `fetch`): send a mutable copy.
    c.res = new Response(c.res.body, c.res)
    target = c.res.headers
    if (replace) target.set(name, value)
    else write(target, name, value)
  }
  return target
}

/**
 * The field sink of finished Hono responses: entries are appended as `appendHeaders` does, and
 * an admitted request's fields straight from its verdict (no header entries built). One per
 * middleware: it holds a context only while `putVerdict` writes to it, which is synchronous.
 */
export class ResponseFields implements FieldWriter, FieldSink<Context> {
  private c: Context | undefined
  private target: Headers | undefined

  putEntries(c: Context, entries: HeaderEntries): void {
    appendHeaders(c, entries)
  }

  putVerdict(c: Context, verdict: Verdict, writeFields: WriteVerdictFields): void {
    if (hasFieldsWritten(c)) {
      const entries: Array<readonly [string, string]> = []
      writeFields(verdict, { write: (name, value) => entries.push([name, value]) })
      writeMerged(c, entries)
      return
    }
    this.c = c
    try {
      writeFields(verdict, this)
    } finally {
      this.c = undefined
      this.target = undefined
    }
    markFieldsWritten(c)
  }

  write(name: string, value: string): void {
    if (this.target === undefined) this.target = appendFirst(this.c!, name, value)
    else write(this.target, name, value)
  }
}

/**
 * The app's own answer to a denial with the rate-limit fields on it: those it lacks (a Response
 * built by hand rather than with `c.json` or `c.body`) are added, on a copy when its headers are
 * immutable. Anything that is not a Response is passed on as it is, for Hono to judge.
 */
function withDenialFields(answer: Response, fields: HeaderEntries): Response {
  if (!(answer instanceof Response)) return answer
  const missing = fields.filter(([name]) => !answer.headers.has(name))
  if (missing.length === 0) return answer
  let target = answer
  try {
    for (const [name, value] of missing) write(target.headers, name, value)
  } catch {
    target = new Response(answer.body, answer)
    for (const [name, value] of missing) write(target.headers, name, value)
  }
  return target
}

/** On Workers, background work outlives the response only through `waitUntil`. */
export function waitUntil(c: Context, pending: Promise<void> | undefined): void {
  if (pending === undefined) return
  try {
    c.executionCtx.waitUntil(pending)
  } catch {
    // No execution context (Node, Bun, Deno): the promise settles on its own.
  }
}

/** The app's own answer to a denial. */
export type OnLimited = (
  c: Context,
  denial: Denial,
  verdict?: Verdict,
) => Response | Promise<Response>

/**
 * Answers a denial: its fields set with `c.header`, then the problem body, or the app's own
 * answer (`onLimited`) with any field it lacks added (a Response built by hand, not with
 * `c.json` or `c.body`, has none of them yet).
 */
export function answerDenial(
  c: Context,
  exchange: Exchange<Context, unknown>,
  onLimited: OnLimited | undefined,
): Promise<Response> {
  const denial = exchange.denial!
  const fields = exchange.denialFields!
  setDenialFields(c, fields)
  if (onLimited === undefined)
    return Promise.resolve(c.body(denial.body, denial.status as ContentfulStatusCode))
  return Promise.resolve(onLimited(c, denial, exchange.verdict)).then((answer) =>
    withDenialFields(answer, fields),
  )
}
