import {
  createExpressRateLimitFieldWriter,
  type ExpressRateLimitDraft,
  type ExpressRateLimitFieldSink,
  type ExpressRateLimitFigures,
  isPromise,
} from '@tollgate/core/adapter'
import type { NextFunction, Request, Response } from 'express'
import { type AnyIncrement, INCREMENT_NOW } from './engine-store.js'
import { ipKeyGenerator } from './ip-key-generator.js'
import { type Config, parseOptions, windowName } from './options.js'
import { watchOutcome } from './outcome.js'
import type { ClientRateLimitInfo, Options, RateLimitRequestHandler } from './types.js'

/** What a request is told about its key; `current` (= `used`) is hidden from iteration. */
class RateLimitInfoRecord {
  constructor(
    public limit: number,
    public used: number,
    public remaining: number,
    public resetTime: Date | undefined,
    public key: string,
  ) {}
  get current(): number {
    return this.used
  }
}

const DRAFTS: readonly unknown[] = ['draft-6', 'draft-7', 'draft-8']

/**
 * Rate-limits an Express app or router with express-rate-limit's options and behaviour, counting
 * in Tollgate's engine (see `MemoryStore`) or in any express-rate-limit store.
 * @example
 * import rateLimit from '@tollgate/express-rate-limit' // was: from 'express-rate-limit'
 * app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, standardHeaders: 'draft-8' }))
 */
export function rateLimit(passed?: Partial<Options>): RateLimitRequestHandler {
  const config = parseOptions(passed ?? {})
  const { store, validations } = config
  validations.creationStack(store)
  validations.unsharedStore(store)
  initStore(config)
  const step = steps(config)
  const middleware = function rateLimit(req: Request, res: Response, next: NextFunction) {
    try {
      const outcome = config.skipFailedRequests || config.skipSuccessfulRequests
      const watched = outcome ? watchOutcome(res, config.skipFailedRequests) : undefined
      const skip = config.skip?.(req, res)
      if (isPromise(skip)) {
        return skip.then((skipped) => (skipped ? next() : step.key(req, res, next, watched)), next)
      }
      if (skip === true) return next()
      return step.key(req, res, next, watched)
    } catch (error) {
      next(error)
    }
  } as RateLimitRequestHandler
  middleware.resetKey = store.resetKey.bind(store)
  middleware.getKey =
    typeof store.get === 'function'
      ? store.get.bind(store)
      : () => {
          throw new Error('The store has no get method: getKey is not available')
        }
  return middleware
}

function initStore(config: Config): void {
  const { store, logger } = config
  if (typeof store.init !== 'function') return
  try {
    const initialised = store.init(config.optionsUsed)
    if (isPromise(initialised)) {
      initialised.then(undefined, (error: unknown) =>
        logger.error(error, 'express-rate-limit: async error during store initialization.'),
      )
    }
  } catch (error) {
    logger.error(error, 'express-rate-limit: error during store initialization.')
  }
}

type Watched = ReturnType<typeof watchOutcome> | undefined
type Handled = void | Promise<void>

/** The request's steps after `skip`, each continued synchronously unless a value is a promise. */
function steps(config: Config) {
  const { store, validations, clock } = config
  const fields = createExpressRateLimitFieldWriter()
  // One sink per middleware, pointed at each response as its fields are written.
  const sink: ExpressRateLimitFieldSink & { res: Response } = {
    res: undefined as unknown as Response,
    set(field, value) {
      this.res.setHeader(field, value)
    },
    append(field, value) {
      this.res.append(field, value)
    },
  }
  const name = windowName(config.windowMs)
  const fixedName = typeof config.limit === 'number' ? `${config.limit}-in-${name}` : undefined
  const incrementNow = (store as { [INCREMENT_NOW]?: (key: string) => AnyIncrement })[
    INCREMENT_NOW
  ]?.bind(store)

  function defaultKey(req: Request, res: Response): string | Promise<string> {
    validations.ip(req.ip)
    validations.trustProxy(req)
    validations.xForwardedForHeader(req)
    validations.forwardedHeader(req)
    const ip = req.ip as string
    const subnet = config.ipv6Subnet
    if (typeof subnet !== 'function') return ipKeyGenerator(ip, subnet)
    const resolve = (bits: number | false) => {
      validations.ipv6Subnet(bits)
      return ipKeyGenerator(ip, bits)
    }
    const bits = subnet(req, res)
    return isPromise(bits) ? bits.then(resolve) : resolve(bits)
  }

  function key(req: Request, res: Response, next: NextFunction, watched: Watched): Handled {
    const made = config.keyGenerator ? config.keyGenerator(req, res) : defaultKey(req, res)
    if (isPromise(made)) return made.then((k) => count(req, res, next, watched, k)).catch(next)
    return count(req, res, next, watched, made)
  }

  function count(
    req: Request,
    res: Response,
    next: NextFunction,
    watched: Watched,
    key: string,
  ): Handled {
    let counted: AnyIncrement
    try {
      counted = incrementNow ? incrementNow(key) : store.increment(key)
    } catch (error) {
      return storeFailed(error, next)
    }
    if (isPromise(counted)) {
      return counted.then(
        (c) => limited(req, res, next, watched, key, c),
        (error) => storeFailed(error, next),
      )
    }
    return limited(req, res, next, watched, key, counted)
  }

  function storeFailed(error: unknown, next: NextFunction): void {
    if (!config.passOnStoreError) {
      next(error)
      return
    }
    config.logger.error(
      error,
      'express-rate-limit: the store failed, allowing the request without rate-limiting.',
    )
    next()
  }

  function limited(
    req: Request,
    res: Response,
    next: NextFunction,
    watched: Watched,
    key: string,
    counted: ClientRateLimitInfo,
  ): Handled {
    validations.positiveHits(counted.totalHits)
    validations.singleCount(req, store, key)
    const limit = typeof config.limit === 'number' ? config.limit : config.limit(req, res)
    if (isPromise(limit)) {
      return limit.then((l) => respond(req, res, next, watched, key, counted, l)).catch(next)
    }
    return respond(req, res, next, watched, key, counted, limit)
  }

  function respond(
    req: Request,
    res: Response,
    next: NextFunction,
    watched: Watched,
    key: string,
    counted: ClientRateLimitInfo,
    limit: number,
  ): Handled {
    validations.limit(limit)
    const { totalHits, resetTime } = counted
    const info = new RateLimitInfoRecord(
      limit,
      totalHits,
      Math.max(limit - totalHits, 0),
      resetTime,
      key,
    )
    ;(req as unknown as Record<string, unknown>)[config.requestPropertyName] = info
    const figures: ExpressRateLimitFigures = {
      limit,
      remaining: info.remaining,
      resetAt: resetTime?.getTime(),
      windowMs: config.windowMs,
      now: clock.now(),
    }
    sink.res = res
    if (config.legacyHeaders && !res.headersSent) fields.legacy(sink, figures)
    const draft = config.standardHeaders
    if (draft && !res.headersSent) {
      if (!DRAFTS.includes(draft)) validations.headersDraftVersion(draft)
      else {
        if (draft !== 'draft-6') validations.headersResetTime(resetTime)
        if (draft === 'draft-8') {
          const policy = policyName(req, res, limit)
          if (isPromise(policy)) {
            return policy
              .then((p) => {
                sink.res = res
                if (!res.headersSent) fields.standard(sink, draft, figures, p, key)
                return decide(req, res, next, watched, key, info, figures)
              })
              .catch(next)
          }
          fields.standard(sink, draft, figures, policy, key)
        } else fields.standard(sink, draft as ExpressRateLimitDraft, figures, '', key)
      }
    }
    return decide(req, res, next, watched, key, info, figures)
  }

  function policyName(req: Request, res: Response, limit: number): string | Promise<string> {
    const identifier = config.identifier
    if (identifier === undefined) return fixedName ?? `${limit}-in-${name}`
    return typeof identifier === 'function' ? identifier(req, res) : identifier
  }

  function decide(
    req: Request,
    res: Response,
    next: NextFunction,
    watched: Watched,
    key: string,
    info: RateLimitInfoRecord,
    figures: ExpressRateLimitFigures,
  ): Handled {
    if (watched !== undefined) watched.refundWhen(config, req, res, key, info.resetTime, clock)
    if (info.used <= info.limit) return next()
    if (!(config.legacyHeaders || config.standardHeaders)) return deny(req, res, next)
    const retryAfter =
      typeof config.retryAfter === 'function' ? config.retryAfter(req, res) : config.retryAfter
    if (isPromise(retryAfter)) {
      return retryAfter
        .then((seconds) => {
          sink.res = res
          if (!res.headersSent) fields.retryAfter(sink, figures, seconds)
          return deny(req, res, next)
        })
        .catch(next)
    }
    if (!res.headersSent) fields.retryAfter(sink, figures, retryAfter)
    return deny(req, res, next)
  }

  function deny(req: Request, res: Response, next: NextFunction): Handled {
    if (config.handler !== undefined) {
      const handled = config.handler(req, res, next, config.optionsUsed) as unknown
      if (isPromise(handled)) return (handled as Promise<void>).catch(next)
      return
    }
    res.status(config.statusCode)
    const message = config.message
    if (typeof message !== 'function') return send(res, message)
    const made = message(req, res)
    if (isPromise(made)) return made.then((m) => send(res, m)).catch(next)
    return send(res, made)
  }

  return { key }
}

function send(res: Response, message: unknown): void {
  if (!res.writableEnded) res.send(message)
}
