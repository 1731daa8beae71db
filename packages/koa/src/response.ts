import type { Denial, Verdict } from '@tollgate/core'
import { isPromise } from '@tollgate/core/adapter'
import type { Context } from 'koa'

/** The default denial: the responder's status and problem+json body, nothing added. */
export function sendDenial(ctx: Context, denial: Denial): void {
  ctx.status = denial.status
  ctx.body = denial.body
}

/** The app's own answer to a denial, or the default one. */
export type OnLimited = (ctx: Context, denial: Denial, verdict?: Verdict) => unknown

/**
 * Runs `onLimited`. An error it throws (`ctx.throw(429)`, say) keeps the fields, which Koa's
 * error handler would otherwise remove with every other header.
 */
export function answerDenial(
  onLimited: OnLimited,
  ctx: Context,
  denial: Denial,
  verdict: Verdict | undefined,
  fieldNames: readonly string[],
): unknown {
  const failed = (error: unknown): never => {
    keepFieldsOnError(ctx.res, fieldNames, error)
    throw error
  }
  try {
    const answered = onLimited(ctx, denial, verdict)
    return isPromise(answered) ? answered.then(undefined, failed) : answered
  } catch (error) {
    return failed(error)
  }
}

/** The status Koa answers a thrown error with (its `onerror` rules). */
export function statusOfError(error: unknown): number {
  const { status, statusCode } = (error ?? {}) as { status?: unknown; statusCode?: unknown }
  const code = typeof status === 'number' ? status : statusCode
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 500
}

type Onerror = (this: Context, error: unknown) => void

/**
 * Koa's error handler removes every header before answering and re-applies `error.headers`: the
 * rate-limit fields on the response (`names`, as they stand) are copied there, so a thrown
 * error's response carries them too. Fields the error already carries win. Never throws (Koa
 * may call this from its last catch): an error whose headers cannot be set goes without them.
 */
export function keepFieldsOnError(
  res: Context['res'],
  names: readonly string[],
  error: unknown,
): void {
  if (typeof error !== 'object' || error === null) return
  try {
    const fields: Record<string, string | string[]> = {}
    for (const name of names) {
      const value = res.getHeader(name)
      if (value !== undefined) fields[name] = typeof value === 'number' ? String(value) : value
    }
    const target = error as { headers?: Record<string, unknown> }
    target.headers = { ...fields, ...target.headers }
  } catch {}
}

/**
 * A `ctx.onerror` that keeps the fields on the error (`keepFieldsOnError`), then runs the app's
 * own: no promise and closure chained on `next()` for every request. One per middleware.
 */
export function onerrorKeepingFields(names: readonly string[]): Onerror {
  return function onerror(this: Context, error: unknown) {
    // Koa calls it with null once every response has finished: nothing to keep then.
    if (error !== null && error !== undefined) keepFieldsOnError(this.res, names, error)
    const appOnerror: Onerror = Object.getPrototypeOf(this).onerror
    return appOnerror.call(this, error)
  }
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
