/**
 * The Worker's app: a Hono app behind `@tollgate/hono` with the default memory store, as a user
 * would deploy it. Bundled by workerd.test.ts for a platform with no Node built-ins.
 */
import { rateLimit } from '@tollgate/hono'
import { Hono, type MiddlewareHandler } from 'hono'

export function limiter(): MiddlewareHandler {
  return rateLimit(
    [
      {
        id: 'per-ip',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '10s',
        burst: 3,
      },
    ],
    {
      skip: (c) => c.req.path === '/health',
      refund: 'failed',
      exposeHeaders: true,
      legacyHeaders: true,
    },
  )
}

export function app(middleware: MiddlewareHandler): Hono {
  const hono = new Hono()
  hono.use(middleware)
  hono.get('/health', (c) => c.text('up'))
  hono.get('/fail', (c) => c.text('failed', 500))
  hono.get('*', (c) => c.text('ok'))
  return hono
}
