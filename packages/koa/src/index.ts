import type { Limiter, RuleConfig, Verdict } from '@tollgate/core'
import {
  type CoreOptions,
  checkHooks,
  createTollgate,
  type Handled,
  isPromise,
  type RefundWhen,
  refundPredicate,
  refundQuietly,
} from '@tollgate/core'
import type { Context, Middleware, Next } from 'koa'
import { defaultUser, type RequestReaders, requestFacts, type UserId } from './request.js'
import {
  type Denial,
  keepHeadersOnError,
  sendDenial,
  setHeaders,
  statusOfError,
} from './response.js'

export * from '@tollgate/core'
export type { UserId } from './request.js'
export type { Denial } from './response.js'

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
  readonly onLimited?:
    | ((ctx: Context, denial: Denial, verdict?: Verdict) => void | Promise<void>)
    | undefined
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
  const gate = createTollgate(rules, options)
  const { limiter, identities } = gate
  const read: RequestReaders = {
    user: options.user ?? defaultUser,
    plan: options.plan,
    identities: options.identities,
  }
  const { skip, onShadowDenied } = options
  const onLimited = options.onLimited ?? sendDenial
  const refundIf = refundPredicate(options.refund)

  function finish(ctx: Context, next: Next, { response, verdict }: Handled) {
    if (verdict !== undefined && onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, ctx)
    setHeaders(ctx, response.headers)
    if (!response.allowed) return onLimited(ctx, response, verdict)
    return next().then(
      () => {
        if (verdict !== undefined && refundIf?.(ctx.status, ctx)) refundQuietly(limiter, verdict)
      },
      (error: unknown) => {
        keepHeadersOnError(error, response.headers)
        if (verdict !== undefined && refundIf?.(statusOfError(error), ctx))
          refundQuietly(limiter, verdict)
        throw error
      },
    )
  }

  // Sync until it must wait: with the memory store, no promise is made here for the limiter.
  return function tollgate(ctx, next) {
    if (skip?.(ctx)) return next()
    const handled = gate.handle(requestFacts(ctx, identities, read))
    return isPromise(handled)
      ? handled.then((settled) => finish(ctx, next, settled))
      : finish(ctx, next, handled)
  }
}
