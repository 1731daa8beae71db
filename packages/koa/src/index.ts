/**
 * `@tollgate/koa`: the rate-limiting middleware for Koa 2 and 3. It also re-exports
 * everything `@tollgate/core` exports (documented there), so an app installs one package.
 * @module @tollgate/koa
 */
import type {
  CoreOptions,
  Limiter,
  RateLimitParts,
  RequestHooks,
  RuleConfig,
  WidenedRulesError,
} from '@tollgate/core'
import {
  type AdapterKit,
  composeAdapterKit,
  createAdapterKit,
  type Exchange,
  isPromise,
  type Updatable,
  withUpdate,
} from '@tollgate/core/adapter'
import { endWhenFinished, NodeResponseFieldWriter } from '@tollgate/core/node'
import type { Context, Middleware, Next } from 'koa'
import { meterBody } from './body-meter.js'
import { koa } from './request.js'
import {
  answerDenial,
  installOnerror,
  keepFieldsOnError,
  type OnLimited,
  onerrorKeepingFields,
  sendDenial,
  statusOfError,
} from './response.js'

export * from '@tollgate/core'

/**
 * Options of the Koa `rateLimit`: the core's (store, headers, failure behaviour…), the request
 * hooks (`user`, `plan`, `skip`…) and what a denial answers.
 * @example
 * app.use(rateLimit(rules, { user: (ctx) => ctx.state.user?.id, skip: (ctx) => ctx.path === '/health' }))
 */
export type KoaRateLimitOptions = CoreOptions &
  RequestHooks<Context> & {
    /** Replaces the default denial (status and problem body); headers are already set. */
    readonly onLimited?: OnLimited | undefined
  }

/**
 * Rate-limits a Koa app or router.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit<R>(
  rules: readonly RuleConfig[] | Limiter | (R & WidenedRulesError<R>),
  options: KoaRateLimitOptions = {},
): Updatable<Middleware> {
  return middleware(createAdapterKit(rules as Rules, options, koa), options)
}

/**
 * `rateLimit` composed of the parts the app names: rules may name only the algorithms given,
 * route matching and the forwarding-header parsers are there only when given, and a rule or
 * option that needs a part left out is refused at start-up, naming it.
 * @example
 * const rateLimit = createRateLimit({ algorithms: { token_bucket: tokenBucket }, store: memoryStore })
 */
export function createRateLimit(parts: RateLimitParts): typeof rateLimit {
  const createKit = composeAdapterKit(parts)
  return (rules, options = {}) => middleware(createKit(rules as Rules, options, koa), options)
}

type Rules = readonly RuleConfig[] | Limiter

function middleware(
  kit: AdapterKit<Context, unknown>,
  options: KoaRateLimitOptions,
): Updatable<Middleware> {
  const fields = new NodeResponseFieldWriter()
  const onLimited = options.onLimited ?? sendDenial
  const onerror = onerrorKeepingFields(kit.fieldNames)

  function finish(ctx: Context, next: Next, exchange: Exchange<Context, unknown>) {
    exchange.writeFields(fields, ctx.res)
    if (exchange.denial !== undefined)
      return answerDenial(onLimited, ctx, exchange.denial, exchange.verdict, kit.fieldNames)
    const meter = kit.meter?.(exchange)
    // When the end is not watched, nothing is left to do once the app has answered, and an
    // error's fields are kept by `onerror`: no promise or closure on `next()`.
    if (!kit.watchesEnd && meter === undefined && installOnerror(ctx, onerror)) return next()
    const failed = (error: unknown) => {
      keepFieldsOnError(ctx.res, kit.fieldNames, error)
      exchange.end(statusOfError(error))
      throw error
    }
    // The body is read as it is sent; the meter ends (or aborts) with the response, an
    // error's included.
    if (meter !== undefined) endWhenFinished(ctx.res, meter)
    const answered = meter === undefined ? undefined : () => meterBody(ctx, meter)
    // A slot is held until the last byte is handed to the socket (a streamed body included),
    // or the client goes away: Node's response says when, not the end of `next()`.
    if (kit.releasesSlots) {
      endWhenFinished(ctx.res, exchange)
      return next().then(answered, failed)
    }
    return next().then(() => {
      answered?.()
      exchange.end(ctx.status)
    }, failed)
  }

  // Sync until it must wait: with the memory store, no promise is made here for the limiter.
  return withUpdate(function tollgate(ctx, next) {
    const exchange = kit.enter(ctx, undefined)
    if (exchange === undefined) return next()
    const ready = exchange.ready
    return isPromise(ready)
      ? ready.then((decided) => finish(ctx, next, decided))
      : finish(ctx, next, ready)
  }, kit)
}
