/**
 * `@tollgate/hono`: the rate-limiting middleware for Hono (Node, Bun, Deno, Cloudflare
 * Workers). It also re-exports everything `@tollgate/core` exports (documented there), so an app
 * installs one package.
 * @module @tollgate/hono
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
  type Updatable,
  withUpdate,
} from '@tollgate/core/adapter'
import type { Context, MiddlewareHandler, Next } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'
import { hono } from './request.js'
import { answerDenial, type OnLimited, ResponseFields, waitUntil } from './response.js'

export * from '@tollgate/core'

/**
 * Options of the Hono `rateLimit`: the core's (store, headers, failure behaviour…), the request
 * hooks (`user`, `plan`, `skip`…), how to read the client's connection, and what a denial answers.
 * @example
 * app.use(rateLimit(rules, { getConnInfo, skip: (c) => c.req.path === '/health' }))
 */
export type HonoRateLimitOptions = CoreOptions &
  RequestHooks<Context> & {
    /**
     * The client's connection, e.g. `getConnInfo` from `hono/bun` or `@hono/node-server/conninfo`.
     * @default Node, Bun, Deno and Cloudflare Workers are recognised without it
     */
    readonly getConnInfo?: GetConnInfo | undefined
    /** Replaces the default denial; the rate-limit headers are already set with `c.header`. */
    readonly onLimited?: OnLimited | undefined
  }

/**
 * Rate-limits a Hono app, on Node, Bun, Deno or Cloudflare Workers.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit<R>(
  rules: readonly RuleConfig[] | Limiter | (R & WidenedRulesError<R>),
  options: HonoRateLimitOptions = {},
): Updatable<MiddlewareHandler> {
  return middleware(createAdapterKit(rules as Rules, options, hono(options.getConnInfo)), options)
}

/**
 * `rateLimit` composed of the parts the app names, for a small bundle (a Worker pays for every
 * byte at each cold start): rules may name only the algorithms given, route matching and the
 * forwarding-header parsers are there only when given, and a rule or option that needs a part
 * left out is refused at start-up, naming it. Same middleware, decisions and fields otherwise.
 * @example
 * const rateLimit = createRateLimit({ algorithms: { token_bucket: tokenBucket } })
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function createRateLimit(parts: RateLimitParts): typeof rateLimit {
  const createKit = composeAdapterKit(parts)
  return (rules, options = {}) =>
    middleware(createKit(rules as Rules, options, hono(options.getConnInfo)), options)
}

type Rules = readonly RuleConfig[] | Limiter

function middleware(
  kit: AdapterKit<Context, unknown>,
  options: HonoRateLimitOptions,
): Updatable<MiddlewareHandler> {
  const { onLimited } = options
  const fields = new ResponseFields()

  function finish(
    c: Context,
    next: Next,
    exchange: Exchange<Context, unknown>,
  ): Promise<Response | undefined> {
    if (exchange.denial !== undefined)
      return answerDenial(c, exchange, onLimited, kit.responder.singleValuedNames)
    // Set when a rule holds slots: a client that goes away gives them back, handler running or not.
    const ends = kit.responseEnd
    ends?.abort(exchange, c.req.raw.signal)
    return next().then(() => {
      // Added to the finished response, so that handlers returning a `Response` of their own
      // (which drops headers set earlier with `c.header`) carry them as well.
      exchange.writeFields(fields, c)
      // Its cost is read from the body as it streams out (on Workers too).
      const meter = kit.meter?.(exchange)
      if (meter !== undefined) c.res = meter.watch(c.res, c.req.raw.signal, (p) => waitUntil(c, p))
      // A slot is held until the body is sent: the response that leaves is the one watched.
      if (ends) c.res = ends.end(exchange, c.res)
      else if (kit.watchesEnd) waitUntil(c, exchange.end(c.res.status))
      return undefined
    })
  }

  // Not an async function: with the memory store, an admitted request chains one promise on
  // `next()`, where an async function would add its own promise and the state of its awaits.
  // What `enter` throws (a hook's error; on another framework, ERR_RL_WRONG_FRAMEWORK or the
  // TypeError of what it misses) is thrown as it is: Hono handles a middleware's throw as it
  // does a rejection, and Express 4, which ignores a returned promise, catches a throw.
  return withUpdate(function tollgate(c, next) {
    const exchange = kit.enter(c, undefined)
    if (exchange === undefined) return next()
    const ready = exchange.ready
    return ready === exchange
      ? finish(c, next, exchange)
      : (ready as Promise<Exchange<Context, unknown>>).then((decided) => finish(c, next, decided))
  }, kit)
}
