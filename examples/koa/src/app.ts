import { type Clock, rateLimit } from '@tollgate/koa'
import Koa from 'koa'

/**
 * A Koa API limited per API key (`X-Api-Key`), or per client IP for requests without one:
 * 100 requests a minute with bursts of 10, by GCRA. `clock` is for tests.
 */
export function createApp(options: { clock?: Clock } = {}) {
  const app = new Koa()
  app.use(
    rateLimit(
      [
        {
          id: 'per-key',
          match: { identity: 'api_key' },
          algorithm: 'gcra',
          rate: 100,
          period: '1m',
          burst: 10,
        },
      ],
      { clock: options.clock, skip: (ctx) => ctx.path === '/health' },
    ),
  )
  app.use((ctx) => {
    ctx.body = ctx.path === '/health' ? 'up' : { quote: 742 }
  })
  return app
}
