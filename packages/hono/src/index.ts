import type { Limiter, RuleConfig, Verdict } from '@tollgate/core'
import {
  type CoreOptions,
  checkHooks,
  createTollgate,
  isPromise,
  type RefundWhen,
  refundPredicate,
  refundQuietly,
} from '@tollgate/core'
import type { Context, MiddlewareHandler } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import {
  addressFrom,
  defaultAddress,
  defaultUser,
  type RequestReaders,
  requestFacts,
  type UserId,
} from './request.js'
import { appendHeaders, type Denial, waitUntil } from './response.js'

export * from '@tollgate/core'
export type { UserId } from './request.js'
export type { Denial } from './response.js'

export type HonoRateLimitOptions = CoreOptions & {
  /**
   * The client's connection, e.g. `getConnInfo` from `hono/bun` or `@hono/node-server/conninfo`.
   * @default Node, Bun, Deno and Cloudflare Workers are recognised without it
   */
  readonly getConnInfo?: GetConnInfo | undefined
  /** Requests for which this returns true are not counted or limited at all (health checks…). */
  readonly skip?: ((c: Context) => boolean) | undefined
  /** The authenticated user's id, for rules keyed on `user`. @default `c.get('user')` (or its `id`) */
  readonly user?: ((c: Context) => UserId) | undefined
  /** The client's plan, for rules that match on `plan`. @default none */
  readonly plan?: ((c: Context) => string | undefined) | undefined
  /** Identities of your own, for rules that key on them (e.g. `account` for login limits). */
  readonly identities?: ((c: Context) => Record<string, string | undefined>) | undefined
  /** Give the charge back for requests that end this way. @default never */
  readonly refund?: RefundWhen<Context> | undefined
  /** Replaces the default denial; the rate-limit headers are already set with `c.header`. */
  readonly onLimited?:
    | ((c: Context, denial: Denial, verdict?: Verdict) => Response | Promise<Response>)
    | undefined
  /** Called when shadow-mode rules would have denied the request (it is let through). */
  readonly onShadowDenied?: ((verdict: Verdict, c: Context) => void) | undefined
}

/**
 * Rate-limits a Hono app, on Node, Bun, Deno or Cloudflare Workers.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: HonoRateLimitOptions = {},
): MiddlewareHandler {
  checkHooks(options, [
    'getConnInfo',
    'skip',
    'user',
    'plan',
    'identities',
    'onLimited',
    'onShadowDenied',
  ])
  const gate = createTollgate(rules, options)
  const { limiter, identities } = gate
  const read: RequestReaders = {
    user: options.user ?? defaultUser,
    plan: options.plan,
    identities: options.identities,
    address: options.getConnInfo === undefined ? defaultAddress : addressFrom(options.getConnInfo),
  }
  const { skip, onShadowDenied } = options
  const onLimited =
    options.onLimited ?? ((c, denial) => c.body(denial.body, denial.status as ContentfulStatusCode))
  const refundIf = refundPredicate(options.refund)

  return async function tollgate(c, next) {
    if (skip?.(c)) return next()
    const handled = gate.handle(requestFacts(c, identities, read))
    const { response, verdict } = isPromise(handled) ? await handled : handled
    if (verdict !== undefined && onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      onShadowDenied(verdict, c)
    if (!response.allowed) {
      for (const [name, value] of response.headers) {
        c.header(name, value, name === 'Content-Type' ? undefined : { append: true })
      }
      return onLimited(c, response, verdict)
    }
    await next()
    // Added to the finished response, so that handlers returning a `Response` of their own
    // (which drops headers set earlier with `c.header`) carry them as well.
    appendHeaders(c, response.headers)
    if (verdict !== undefined && refundIf?.(c.res.status, c))
      waitUntil(c, refundQuietly(limiter, verdict))
  }
}
