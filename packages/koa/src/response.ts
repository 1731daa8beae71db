import type { HeaderEntries, LimitResponse } from '@tollgate/core'
import type { Context } from 'koa'

/** A denial, as the responder built it: status, headers (already on `ctx`) and problem body. */
export type Denial = Extract<LimitResponse, { allowed: false }>

/** The default denial: the responder's status and problem+json body, nothing added. */
export function sendDenial(ctx: Context, denial: Denial): void {
  ctx.status = denial.status
  ctx.body = denial.body
}

/**
 * Koa's error handler removes every header before answering; it re-applies `error.headers`, so
 * the rate-limit fields are put there to reach the client on a 500 as well.
 */
export function keepHeadersOnError(error: unknown, headers: HeaderEntries): void {
  if (typeof error !== 'object' || error === null) return
  const target = error as { headers?: Record<string, string> }
  const merged: Record<string, string> = {}
  for (const [name, value] of headers) {
    if (name === 'Content-Type') continue
    merged[name] = merged[name] === undefined ? value : `${merged[name]}, ${value}`
  }
  target.headers = { ...merged, ...target.headers }
}

/** The status Koa answers a thrown error with (its `onerror` rules). */
export function statusOfError(error: unknown): number {
  const { status, statusCode } = (error ?? {}) as { status?: unknown; statusCode?: unknown }
  const code = typeof status === 'number' ? status : statusCode
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 500
}

type Onerror = (this: Context, error: unknown) => void

/**
 * A `ctx.onerror` that first copies the rate-limit fields on the response (`names`, as written)
 * onto the error, then runs the app's own. Koa's error handler removes every header and
 * re-applies `error.headers`, so this keeps the fields on a thrown error's response without
 * chaining a promise and a closure on `next()` for every request. One per middleware.
 */
export function onerrorKeepingFields(names: readonly string[]): Onerror {
  return function onerror(this: Context, error: unknown) {
    if (typeof error === 'object' && error !== null) {
      // Nothing here may throw: Koa calls onerror from its last catch, where a throw would be
      // an unhandled rejection. An error whose headers cannot be set is answered without them.
      try {
        copyFields(this.res, names, error as { headers?: Record<string, unknown> })
      } catch {}
    }
    const appOnerror: Onerror = Object.getPrototypeOf(this).onerror
    return appOnerror.call(this, error)
  }
}

function copyFields(
  res: Context['res'],
  names: readonly string[],
  error: { headers?: Record<string, unknown> },
): void {
  const fields: Record<string, string | string[]> = {}
  for (const name of names) {
    const value = res.getHeader(name)
    if (value !== undefined) fields[name] = typeof value === 'number' ? String(value) : value
  }
  error.headers = { ...fields, ...error.headers }
}

/**
 * Puts `onerror` on `ctx` for this request. Refused (false) when `ctx` already has an `onerror`
 * of its own (another middleware's, or a second Tollgate's), which this would replace.
 */
export function installOnerror(ctx: Context, onerror: Onerror): boolean {
  if (Object.hasOwn(ctx, 'onerror')) return false
  ctx.onerror = onerror
  return true
}
