/**
 * `@tollgate/express`: the rate-limiting middleware for Express 4 and 5. It also re-exports
 * everything `@tollgate/core` exports (documented there), so an app installs one package.
 * @module @tollgate/express
 */
import type { Limiter, RateLimitParts, RuleConfig, WidenedRulesError } from '@tollgate/core'
import {
  type AdapterKit,
  composeAdapterKit,
  createAdapterKit,
  type Exchange,
  type Framework,
  isPromise,
  type Updatable,
  withUpdate,
} from '@tollgate/core/adapter'
import {
  closeSignal,
  endWhenFinished,
  eventLoopDelay,
  meterNodeBody,
  NodeResponseFieldWriter,
} from '@tollgate/core/node'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { ExpressRateLimitOptions } from './options.js'
import { sendDenial } from './response.js'

export * from '@tollgate/core'
export type { ExpressRateLimitOptions } from './options.js'

/**
 * How the kit reads an Express request. The path is `req.originalUrl`, the full one, rather than
 * `req.path`, which is relative to where the middleware is mounted (`app.use('/v1', …)`). The
 * client address is the socket peer's: forwarding headers are trusted only through Tollgate's own
 * `trustProxy`, never through Express's `trust proxy` setting, so both can be set apart. The
 * user is where Passport (and most Express auth middleware) leaves it, `req.user`.
 */
const express: Framework<Request> = {
  name: 'Express',
  method: (req) => req.method,
  path: (req) => req.originalUrl || req.url,
  socketAddress: (req) => req.socket.remoteAddress,
  header: (req, name) => req.headers[name],
  user: (req) => (req as Request & { user?: unknown }).user,
  incoming: (req) => req,
  disconnected: (req) => closeSignal(req.res!),
  eventLoopDelay,
}

/**
 * Rate-limits an Express app or router.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit<R>(
  rules: readonly RuleConfig[] | Limiter | (R & WidenedRulesError<R>),
  options: ExpressRateLimitOptions = {},
): Updatable<RequestHandler> {
  return middleware(createAdapterKit(rules as Rules, options, express), options)
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
  return (rules, options = {}) => middleware(createKit(rules as Rules, options, express), options)
}

type Rules = readonly RuleConfig[] | Limiter

function middleware(
  kit: AdapterKit<Request, Response>,
  options: ExpressRateLimitOptions,
): Updatable<RequestHandler> {
  const fields = new NodeResponseFieldWriter()
  const onLimited = options.onLimited ?? sendDenial

  function finish(
    exchange: Exchange<Request, Response>,
    req: Request,
    res: Response,
    next: NextFunction,
  ) {
    exchange.writeFields(fields, res)
    if (exchange.denial === undefined) {
      if (kit.watchesEnd) endWhenFinished(res, exchange)
      const meter = kit.meter?.(exchange)
      if (meter !== undefined) meterNodeBody(res, meter)
      return next()
    }
    // An async onLimited that rejects goes to Express's error handling, as a throw does
    // (Express 4 would leave the rejection unhandled and the request hanging).
    const answered = onLimited(req, res, next, exchange.denial, exchange.verdict)
    if (isPromise(answered)) answered.then(undefined, next)
  }

  return withUpdate(function tollgate(req, res, next) {
    const exchange = kit.enter(req, res)
    if (exchange === undefined) return next()
    const ready = exchange.ready
    if (ready === exchange) return finish(exchange, req, res, next)
    // An error, or an onLimited hook that throws, goes to Express.
    const later = ready as Promise<Exchange<Request, Response>>
    later.then((decided) => finish(decided, req, res, next)).catch(next)
  }, kit)
}
