import { type Clock, rateLimit } from '@tollgate/hono'
import { Hono } from 'hono'

/**
 * A Hono API on Node, limited per client IP (read from the Node socket by the adapter):
 * 10 requests a second with bursts of 20, and bulk calls that cost 5. `clock` is for tests.
 */
export function createApp(options: { clock?: Clock } = {}) {
  const app = new Hono()
  app.use(
    rateLimit(
      [
        {
          id: 'per-ip',
          match: { identity: 'ip' },
          algorithm: 'token_bucket',
          rate: 10,
          burst: 20,
          costByRoute: { 'POST /bulk': 5 },
        },
      ],
      { clock: options.clock },
    ),
  )
  app.get('/', (c) => c.text('Hello'))
  app.post('/bulk', (c) => c.json({ accepted: 5 }))
  return app
}
