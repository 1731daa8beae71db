import { rateLimit } from '@tollgate/hono'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import { rateLimiter } from 'hono-rate-limiter'
import { clientAddresses } from '../clients.js'
import { DEFAULT_FIELDS, LIMIT, TOLLGATE_RULES, type VariantName, WINDOW_MS } from '../config.js'
import { naiveTokenBucket } from '../naive.js'

export const PEER = 'hono-rate-limiter'

/**
 * `app.request()` has no socket: each request carries its client's address in its bindings
 * (`c.env`), and every limiter is told it, the way `getConnInfo` would on a real runtime.
 */
type Bindings = { readonly address: string }
const clientOf = (c: Context) => (c.env as Bindings).address
export const getConnInfo = (c: Context) => ({ remote: { address: clientOf(c) } })

function naive(): MiddlewareHandler {
  const take = naiveTokenBucket(LIMIT, LIMIT / 60)
  return async (c, next) => {
    const { allowed, remaining, retryAfterMs } = take(clientOf(c))
    c.header('X-RateLimit-Remaining', String(remaining))
    if (!allowed) {
      c.header('Retry-After', String(Math.ceil(retryAfterMs / 1000)))
      return c.body(null, 429)
    }
    await next()
    return undefined
  }
}

const limiters: Record<VariantName, () => MiddlewareHandler | undefined> = {
  bare: () => undefined,
  naive,
  'fields only': () => async (c, next) => {
    await next()
    for (const [name, value] of DEFAULT_FIELDS) c.res.headers.append(name, value)
  },
  // Its defaults: the current RateLimit and RateLimit-Policy fields.
  tollgate: () => rateLimit(TOLLGATE_RULES, { getConnInfo }),
  'tollgate, partition key': () => rateLimit(TOLLGATE_RULES, { getConnInfo, partitionKey: true }),
  // What hono-rate-limiter sends: draft-7 RateLimit and RateLimit-Policy only.
  'tollgate, same headers': () =>
    rateLimit(TOLLGATE_RULES, { getConnInfo, standardHeaders: 'draft-7' }),
  // Every header it has: draft-7 RateLimit fields (it sends no X-RateLimit-*).
  peer: () => honoPeer('draft-7'),
}

/** hono-rate-limiter with its memory store and the given RateLimit fields. */
export function honoPeer(standardHeaders: 'draft-6' | 'draft-7'): MiddlewareHandler {
  return rateLimiter({ windowMs: WINDOW_MS, limit: LIMIT, standardHeaders, keyGenerator: clientOf })
}

/** An app behind `handler` (none: the bare app). */
export function honoAppWith(handler: MiddlewareHandler | undefined): Hono {
  const app = new Hono()
  if (handler !== undefined) app.use(handler)
  app.get('/', (c) => c.text('ok'))
  return app
}

export function honoApp(variant: VariantName): Hono {
  return honoAppWith(limiters[variant]())
}

/** Sends a request to `app` from the next of `clients` addresses in turn. */
export function honoSenderTo(app: Hono, clients = 1) {
  const address = clientAddresses(clients)
  return () => app.request('/', undefined, { address: address() } satisfies Bindings)
}

export function honoSender(variant: VariantName, clients = 1) {
  return honoSenderTo(honoApp(variant), clients)
}
