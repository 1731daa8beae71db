import {
  type FieldWriter,
  type HeaderEntries,
  isFieldPresent,
  type LimitResponse,
  type Tollgate,
  type Verdict,
} from '@tollgate/core'
import type { Context } from 'koa'

/** A denial, as the responder built it: status, headers (already on `ctx`) and problem body. */
export type Denial = Extract<LimitResponse, { allowed: false }>

/**
 * Puts the rate-limit fields on the response. A field the app already set gets the value
 * appended (`ctx.append`); Content-Type, single-valued, is replaced; the rest are set directly.
 * The names already set are read once: usually none, as a limiter runs early.
 */
export function setHeaders(ctx: Context, headers: HeaderEntries): void {
  const present = ctx.res.getHeaderNames()
  // Entries are read by index: destructuring an array runs its iterator, an object per entry.
  for (let i = 0; i < headers.length; i++) {
    const entry = headers[i]!
    setField(ctx, present, entry[0], entry[1])
  }
}

function setField(ctx: Context, present: readonly string[], name: string, value: string): void {
  if (name === 'Content-Type' || !isFieldPresent(present, name)) ctx.res.setHeader(name, value)
  else ctx.append(name, value)
}

const NO_NAMES: readonly string[] = []

/**
 * Writes an admitted request's fields as `setHeaders` does, straight from its verdict (no header
 * entries built). One per middleware: it holds a context only while `put` writes to it, which
 * is synchronous.
 */
export class ResponseFields implements FieldWriter {
  private ctx: Context | undefined
  private present: readonly string[] = NO_NAMES

  put(ctx: Context, verdict: Verdict, writeFields: Tollgate['writeFields']): void {
    this.ctx = ctx
    this.present = ctx.res.getHeaderNames()
    try {
      writeFields(verdict, this)
    } finally {
      this.ctx = undefined
      this.present = NO_NAMES
    }
  }

  write(name: string, value: string): void {
    setField(this.ctx!, this.present, name, value)
  }
}

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
