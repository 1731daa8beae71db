import type {
  HeaderEntries,
  Limiter,
  LimitResponse,
  MaybePromise,
  RuleConfig,
  Verdict,
} from '@tollgate/core'
import type { Context, Middleware, Next } from 'koa'
import {
  type CoreOptions,
  checkHooks,
  createTollgate,
  type RefundWhen,
  refundPredicate,
} from './options.js'
import { defaultUser, type RequestReaders, requestFacts, type UserId } from './request.js'

export * from '@tollgate/core'
export type { CoreOptions, RefundWhen } from './options.js'
export type { UserId } from './request.js'

/** A denial, as the responder built it: status, headers (already on `ctx`) and problem body. */
export type Denial = Extract<LimitResponse, { allowed: false }>

export type KoaRateLimitOptions = CoreOptions & {
  /** Requests for which this returns true are not counted or limited at all (health checks…). */
  readonly skip?: ((ctx: Context) => boolean) | undefined
  /** The authenticated user's id, for rules keyed on `user`. @default `ctx.state.user` (or its `id`) */
  readonly user?: ((ctx: Context) => UserId) | undefined
  /** The client's plan, for rules that match on `plan`. @default none */
  readonly plan?: ((ctx: Context) => string | undefined) | undefined
  /** Identities of your own, for rules that key on them (e.g. `account` for login limits). */
  readonly identities?: ((ctx: Context) => Record<string, string | undefined>) | undefined
  /** Give the charge back for requests that end this way. @default never */
  readonly refund?: RefundWhen<Context> | undefined
  /** Replaces the default denial (status and problem body); headers are already set. */
  readonly onLimited?: ((ctx: Context, denial: Denial, verdict?: Verdict) => void) | undefined
  /** Called when shadow-mode rules would have denied the request (it is let through). */
  readonly onShadowDenied?: ((verdict: Verdict, ctx: Context) => void) | undefined
}

/**
 * Rate-limits a Koa app or router.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: KoaRateLimitOptions = {},
): Middleware {
  checkHooks(options, ['skip', 'user', 'plan', 'identities', 'onLimited', 'onShadowDenied'])
  const { limiter, identities, responder } = createTollgate(rules, options)
  const read: RequestReaders = {
    user: options.user ?? defaultUser,
    plan: options.plan,
    identities: options.identities,
  }
  const { skip, onShadowDenied } = options
  const onLimited = options.onLimited ?? sendDenial
  const refundIf = refundPredicate(options.refund)

  // Sync until it must wait: with the memory store, no promise is made here for the limiter.
  function decided(ctx: Context, next: Next, verdict: Verdict): Promise<void> | void {
    if (onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, ctx)
    if (!responder.usesPartitionKeys)
      return apply(ctx, next, responder.respond(verdict, verdict.at), verdict)
    return responder
      .respondAsync(verdict, verdict.at)
      .then((response) => apply(ctx, next, response, verdict))
  }

  // A store failure is already a verdict (fail-open or fail-closed); what reaches here is an
  // error the client must hear about (a cost that can never fit: 400), or a bug for Koa.
  function failed(ctx: Context, next: Next, error: unknown): Promise<void> | void {
    const response = responder.respondToError(error)
    if (response === undefined) throw error
    return apply(ctx, next, response, undefined)
  }

  function apply(ctx: Context, next: Next, response: LimitResponse, verdict: Verdict | undefined) {
    const res = ctx.res
    for (const [name, value] of response.headers) {
      // Appended to what the app set, if anything; Content-Type is single-valued.
      if (name === 'Content-Type' || res.getHeader(name) === undefined) res.setHeader(name, value)
      else ctx.append(name, value)
    }
    if (!response.allowed) return onLimited(ctx, response, verdict)
    return next().then(
      () => {
        if (verdict !== undefined && refundIf?.(ctx.status, ctx)) refund(limiter, verdict)
      },
      (error: unknown) => {
        keepHeadersOnError(error, response.headers)
        if (verdict !== undefined && refundIf?.(statusOfError(error), ctx)) refund(limiter, verdict)
        throw error
      },
    )
  }

  return function tollgate(ctx, next) {
    if (skip?.(ctx)) return next()
    let verdict: MaybePromise<Verdict>
    try {
      verdict = limiter.decide(requestFacts(ctx, identities, read))
    } catch (error) {
      return failed(ctx, next, error)
    }
    if (!isPromise(verdict)) return decided(ctx, next, verdict)
    return verdict.then(
      (settled) => decided(ctx, next, settled),
      (error: unknown) => failed(ctx, next, error),
    )
  }
}

function sendDenial(ctx: Context, denial: Denial): void {
  ctx.status = denial.status
  ctx.body = denial.body
}

/**
 * Koa's error handler removes every header before answering; it re-applies `error.headers`, so
 * the rate-limit fields are put there to reach the client on a 500 as well.
 */
function keepHeadersOnError(error: unknown, headers: HeaderEntries): void {
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
function statusOfError(error: unknown): number {
  const { status, statusCode } = (error ?? {}) as { status?: unknown; statusCode?: unknown }
  const code = typeof status === 'number' ? status : statusCode
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 500
}

/**
 * Runs once the response is decided, so nothing may escape: the limiter reports store failures
 * itself (`onError`), and has nothing else to throw for a verdict it made.
 */
function refund(limiter: Limiter, verdict: Verdict): void {
  try {
    const done = limiter.refund(verdict)
    if (isPromise(done)) done.then(undefined, () => {})
  } catch {}
}

function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}
