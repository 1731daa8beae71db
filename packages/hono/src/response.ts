import type { FieldWriter, HeaderEntries, LimitResponse, Tollgate, Verdict } from '@tollgate/core'
import type { Context } from 'hono'

/** A denial, as the responder built it: status, headers and problem body. */
export type Denial = Extract<LimitResponse, { allowed: false }>

/**
 * Appends the rate-limit fields to the finished response. Done after `next()` rather than with
 * `c.header` before it, so that handlers returning a `Response` of their own (which drops
 * headers set earlier) carry them as well.
 */
export function appendHeaders(c: Context, headers: HeaderEntries): void {
  if (headers.length === 0) return
  const target = appendFirst(c, headers[0]![0], headers[0]![1])
  for (let i = 1; i < headers.length; i++) target.append(headers[i]![0], headers[i]![1])
}

/** Appends the first field, and returns the headers to append the others to. */
function appendFirst(c: Context, name: string, value: string): Headers {
  let target = c.res.headers
  try {
    target.append(name, value)
  } catch {
    // An immutable response (`Response.redirect`, straight from `fetch`): send a mutable copy.
    c.res = new Response(c.res.body, c.res)
    target = c.res.headers
    target.append(name, value)
  }
  return target
}

/**
 * Appends an admitted request's fields to the finished response as `appendHeaders` does,
 * straight from its verdict (no header entries built). One per middleware: it holds a context
 * only while `put` writes to it, which is synchronous.
 */
export class ResponseFields implements FieldWriter {
  private c: Context | undefined
  private target: Headers | undefined

  put(c: Context, verdict: Verdict, writeFields: Tollgate['writeFields']): void {
    this.c = c
    try {
      writeFields(verdict, this)
    } finally {
      this.c = undefined
      this.target = undefined
    }
  }

  write(name: string, value: string): void {
    if (this.target === undefined) this.target = appendFirst(this.c!, name, value)
    else this.target.append(name, value)
  }
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
