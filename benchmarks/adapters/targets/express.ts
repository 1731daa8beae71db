import { rateLimit } from '@tollgate/express'
import express, { type Express, type RequestHandler } from 'express'
import expressRateLimit from 'express-rate-limit'
import { inject } from 'light-my-request'
import { clientAddresses } from '../clients.js'
import { DEFAULT_FIELDS, LIMIT, TOLLGATE_RULES, type VariantName, WINDOW_MS } from '../config.js'
import { naiveTokenBucket } from '../naive.js'

export const PEER = 'express-rate-limit'

function naive(): RequestHandler {
  const take = naiveTokenBucket(LIMIT, LIMIT / 60)
  return (req, res, next) => {
    const { allowed, remaining, retryAfterMs } = take(req.socket.remoteAddress ?? '')
    res.setHeader('X-RateLimit-Remaining', remaining)
    if (allowed) return next()
    res.setHeader('Retry-After', Math.ceil(retryAfterMs / 1000))
    res.status(429).end()
  }
}

const limiters: Record<VariantName, () => RequestHandler | undefined> = {
  bare: () => undefined,
  naive,
  'fields only': () => (_req, res, next) => {
    for (const [name, value] of DEFAULT_FIELDS) res.setHeader(name, value)
    next()
  },
  // Its defaults: the current RateLimit and RateLimit-Policy fields.
  tollgate: () => rateLimit(TOLLGATE_RULES),
  'tollgate, partition key': () => rateLimit(TOLLGATE_RULES, { partitionKey: true }),
  // What express-rate-limit sends: X-RateLimit-* and the RateLimit fields with a partition key.
  'tollgate, same headers': () =>
    rateLimit(TOLLGATE_RULES, { legacyHeaders: true, partitionKey: true }),
  // Every header it has: draft-8 RateLimit fields (with its partition key) and X-RateLimit-*.
  peer: () => expressPeer('draft-8'),
}

/** express-rate-limit with its memory store, the given RateLimit fields and X-RateLimit-*. */
export function expressPeer(standardHeaders: 'draft-6' | 'draft-7' | 'draft-8'): RequestHandler {
  return expressRateLimit({
    windowMs: WINDOW_MS,
    limit: LIMIT,
    standardHeaders,
    legacyHeaders: true,
  })
}

/** An app behind `handler` (none: the bare app), as a Node request listener. */
export function expressAppWith(handler: RequestHandler | undefined): Express {
  const app = express()
  if (handler !== undefined) app.use(handler)
  app.get('/', (_req, res) => {
    res.end('ok')
  })
  return app
}

/** The variant's app, as a Node request listener (for light-my-request or `http.createServer`). */
export function expressApp(variant: VariantName): Express {
  return expressAppWith(limiters[variant]())
}

/** Sends a request to `app` from the next of `clients` addresses in turn. */
export function expressSenderTo(app: Express, clients = 1) {
  const address = clientAddresses(clients)
  return () => inject(app, { method: 'GET', url: '/', remoteAddress: address() })
}

export function expressSender(variant: VariantName, clients = 1) {
  return expressSenderTo(expressApp(variant), clients)
}
