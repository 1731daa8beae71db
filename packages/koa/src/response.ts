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
