import { type Clock, type Logger, type Rule, rateLimit, type Store } from '@tollgate/express'
import express, { type Express, type Request } from 'express'

type Plan = 'free' | 'growth'

/** Shiplane's merchants by API key. A real gateway would ask its account service. */
export const MERCHANTS: Readonly<Record<string, { readonly name: string; readonly plan: Plan }>> = {
  k_free_acme: { name: 'Acme Widgets', plan: 'free' },
  k_growth_globex: { name: 'Globex Freight', plan: 'growth' },
}

export type GatewayOptions = {
  /** Validated rules, e.g. from `loadShiplaneRules()`. */
  readonly rules: readonly Rule[]
  /** @default the memory store */
  readonly store?: Store | undefined
  /** The demo injects a clock it moves itself, so that its timeline needs no sleeping. @default Date.now */
  readonly clock?: Clock | undefined
  /** @default console */
  readonly logger?: Logger | false | undefined
}

function merchantOf(req: Request) {
  const key = req.get('x-api-key')
  return key === undefined ? undefined : MERCHANTS[key]
}

/**
 * The Shiplane API gateway: rate limits first, then the routes. It sits behind a load balancer
 * on the same host, so the client address is taken from `X-Forwarded-For` only when the socket
 * peer is a loopback address, and only the entry that load balancer appended.
 */
export function createGateway(options: GatewayOptions): Express {
  const app = express()
  app.get('/health', (_req, res) => {
    res.json({ status: 'up' })
  })
  app.use(
    rateLimit(options.rules, {
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      trustProxy: 'loopback',
      // Merchants' older clients read GitHub's X-RateLimit-* fields: sent beside the IETF ones.
      legacyHeaders: true,
      plan: (req) => merchantOf(req)?.plan,
    }),
  )
  app.post('/v1/login', (_req, res) => {
    res.json({ status: 'signed-in' })
  })
  // Everything below needs a known merchant.
  app.use('/v1', (req, res, next) => {
    if (merchantOf(req) === undefined) res.status(401).json({ error: 'unknown API key' })
    else next()
  })
  app.get('/v1/quotes', (_req, res) => {
    res.json({ carrier: 'ShipFast', service: 'ground', priceCents: 742 })
  })
  // A colon inside a segment is literal, escaped for Express's router.
  app.post('/v1/labels\\:batch', (_req, res) => {
    res.json({ labels: 10 })
  })
  return app
}
