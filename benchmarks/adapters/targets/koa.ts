import { rateLimit } from '@tollgate/koa'
import Koa, { type Middleware } from 'koa'
import koaRateLimit from 'koa-ratelimit'
import { inject } from 'light-my-request'
import { clientAddresses } from '../clients.js'
import { DEFAULT_FIELDS, LIMIT, TOLLGATE_RULES, type VariantName, WINDOW_MS } from '../config.js'
import { naiveTokenBucket } from '../naive.js'

export const PEER = 'koa-ratelimit'

function naive(): Middleware {
  const take = naiveTokenBucket(LIMIT, LIMIT / 60)
  return (ctx, next) => {
    const { allowed, remaining, retryAfterMs } = take(ctx.req.socket.remoteAddress ?? '')
    ctx.set('X-RateLimit-Remaining', String(remaining))
    if (allowed) return next()
    ctx.set('Retry-After', String(Math.ceil(retryAfterMs / 1000)))
    ctx.status = 429
    return undefined
  }
}

const limiters: Record<VariantName, () => Middleware | undefined> = {
  bare: () => undefined,
  naive,
  'fields only': () => (ctx, next) => {
    for (const [name, value] of DEFAULT_FIELDS) ctx.res.setHeader(name, value)
    return next()
  },
  // Its defaults: the current RateLimit and RateLimit-Policy fields.
  tollgate: () => rateLimit(TOLLGATE_RULES),
  'tollgate, partition key': () => rateLimit(TOLLGATE_RULES, { partitionKey: true }),
  // What koa-ratelimit sends: X-RateLimit-* only.
  'tollgate, same headers': () =>
    rateLimit(TOLLGATE_RULES, { standardHeaders: false, legacyHeaders: true }),
  // Its memory driver, keyed by IP; it always sends X-RateLimit-Limit/-Remaining/-Reset.
  peer: () => koaPeer(),
}

/** koa-ratelimit with its memory driver, keyed by IP. */
export function koaPeer(): Middleware {
  return koaRateLimit({
    driver: 'memory',
    db: new Map(),
    duration: WINDOW_MS,
    max: LIMIT,
    id: (ctx) => ctx.ip,
  })
}

/** An app behind `handler` (none: the bare app), as a Node request listener. */
export function koaAppWith(handler: Middleware | undefined) {
  const app = new Koa()
  if (handler !== undefined) app.use(handler)
  app.use((ctx) => {
    ctx.body = 'ok'
  })
  return app.callback()
}

export function koaApp(variant: VariantName) {
  return koaAppWith(limiters[variant]())
}

/** Sends a request to `listener` from the next of `clients` addresses in turn. */
export function koaSenderTo(listener: ReturnType<typeof koaAppWith>, clients = 1) {
  const address = clientAddresses(clients)
  return () => inject(listener, { method: 'GET', url: '/', remoteAddress: address() })
}

export function koaSender(variant: VariantName, clients = 1) {
  return koaSenderTo(koaApp(variant), clients)
}
