import type { HeaderEntries, LimitResponse } from '@tollgate/core'
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
  const [name, value] = headers[0]!
  let target = c.res.headers
  try {
    target.append(name, value)
  } catch {
    // An immutable response (`Response.redirect`, straight from `fetch`): send a mutable copy.
    c.res = new Response(c.res.body, c.res)
    target = c.res.headers
    target.append(name, value)
  }
  for (let i = 1; i < headers.length; i++) target.append(headers[i]![0], headers[i]![1])
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
