import type { Denial, Verdict } from '@tollgate/core'
import type {
  Exchange,
  FieldSink,
  FieldWriter,
  HeaderEntries,
  WriteVerdictFields,
} from '@tollgate/core/adapter'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/**
 * Set on a context once a Tollgate middleware has put its fields on the response: a second one
 * (further out, so writing later) merges its fields with them rather than appending, as
 * `mergeFields` says. A mark, rather than reading the fields back on every response, because
 * reading a `Headers` costs about what writing one field does. Without a description, which
 * only a debugger would show and every Worker would carry.
 */
const FIELDS_WRITTEN = Symbol()

type Marked = Context & { [FIELDS_WRITTEN]?: true }

/** How a middleware's fields are merged with another's (`WriteVerdictFields.merge`). */
type Merge = WriteVerdictFields['merge']

/**
 * Sets a field that holds one value (`set`: as a family writes it, `single`), appends to a list
 * field.
 */
function write(target: Headers, name: string, value: string, set?: boolean): void {
  if (set) target.set(name, value)
  else target.append(name, value)
}

/**
 * Writes the first field (as `write` does), and returns the headers to write the others to: on
 * an immutable response (`Response.redirect`, straight from `fetch`), those of a mutable copy,
 * which is sent instead (put in `c.res`: a context, or an app's own answer held as one).
 */
function writeFirst(c: { res: Response }, name: string, value: string, set?: boolean): Headers {
  try {
    write(c.res.headers, name, value, set)
  } catch {
    c.res = new Response(c.res.body, c.res)
    write(c.res.headers, name, value, set)
  }
  return c.res.headers
}

/**
 * The field sink of finished Hono responses: fields are added to the response after `next()`,
 * so that handlers returning a `Response` of their own (which drops headers set earlier with
 * `c.header`) carry them as well; an admitted request's straight from its verdict (no header
 * entries built). One per middleware: it holds a context only while it writes to it, which is
 * synchronous (a write that throws leaves it held until the next, which starts afresh). Denials are answered with their fields set by `answerDenial`, so the entries put
 * here are those a verdict's fields are followed by (`Tollgate-Debug`), merged as they are.
 */
export class ResponseFields implements FieldWriter, FieldSink<Context> {
  // Declared, not initialised: set before they are read, on the one sink of a middleware.
  declare private c: Context | undefined
  declare private target: Headers | undefined
  declare private merge: Merge | undefined

  /**
   * Writes entries onto a response that carries another Tollgate middleware's fields, or this
   * one's (always, after `putVerdict`), as the verdict's `merge` says. That one ran inside this
   * one (Hono writes after `next()`), so this middleware's list members go first: the order
   * Express and Koa give, where the outer middleware writes first. A middleware's entries name
   * each field once.
   */
  putEntries(c: Context, entries: HeaderEntries): void {
    const existing = (name: string) => c.res.headers.get(name) ?? undefined
    let target: Headers | undefined
    for (const [name, value, write] of this.merge!(entries, existing)) {
      const theirs = write === 'append' ? existing(name) : undefined
      const merged = theirs === undefined ? value : `${value}, ${theirs}`
      if (target === undefined) target = writeFirst(c, name, merged, true)
      else target.set(name, merged)
    }
  }

  putVerdict(c: Context, verdict: Verdict, writeFields: WriteVerdictFields): void {
    this.merge = writeFields.merge
    if ((c as Marked)[FIELDS_WRITTEN]) {
      const entries: Array<readonly [string, string]> = []
      writeFields(verdict, { write: (name, value) => entries.push([name, value]) })
      this.putEntries(c, entries)
      return
    }
    this.c = c
    this.target = undefined
    writeFields(verdict, this)
    this.c = undefined
    ;(c as Marked)[FIELDS_WRITTEN] = true
  }

  write(name: string, value: string, single?: true): void {
    if (this.target === undefined) this.target = writeFirst(this.c!, name, value, single)
    else write(this.target, name, value, single)
  }
}

/**
 * The app's own answer to a denial with the rate-limit fields on it: those it lacks (a Response
 * built by hand rather than with `c.json` or `c.body`) are added, on a copy when its headers are
 * immutable. Anything that is not a Response is passed on as it is, for Hono to judge.
 */
function withDenialFields(answer: Response, fields: HeaderEntries): Response {
  if (!(answer instanceof Response)) return answer
  const held = { res: answer }
  // Each field is named once: those written here are not among those it had, so appending is
  // setting. Each is written as a first one: on immutable headers, the first copies the answer,
  // and the copy takes the rest.
  for (const [name, value] of fields) if (!answer.headers.has(name)) writeFirst(held, name, value)
  return held.res
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
 * Answers a denial: its fields set with `c.header` (appended, but for those that hold one value:
 * the responder's `singleValuedNames`), then the problem body, or the app's own answer
 * (`onLimited`) with any field it lacks added (a Response built by hand, not with `c.json` or
 * `c.body`, has none of them yet).
 */
export function answerDenial(
  c: Context,
  exchange: Exchange<Context, unknown>,
  onLimited: OnLimited | undefined,
  singleValued: readonly string[],
): Promise<Response> {
  const denial = exchange.denial!
  const fields = exchange.denialFields!
  // Set with `c.header`, on the response Hono is about to build, and marked (`FIELDS_WRITTEN`).
  for (const [name, value] of fields) {
    c.header(name, value, singleValued.includes(name) ? undefined : { append: true })
  }
  ;(c as Marked)[FIELDS_WRITTEN] = true
  if (onLimited === undefined)
    return Promise.resolve(c.body(denial.body, denial.status as ContentfulStatusCode))
  return Promise.resolve(onLimited(c, denial, exchange.verdict)).then((answer) =>
    withDenialFields(answer, fields),
  )
}
