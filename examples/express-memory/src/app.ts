import { type Clock, rateLimit } from '@tollgate/express'
import express, { type Express } from 'express'

/**
 * An Express API limited per client IP on the embedded memory store: 10 requests a second with
 * bursts of 20, and 5 login attempts a minute. `clock` is for tests (time without sleeping).
 */
export function createApp(options: { clock?: Clock } = {}): Express {
  const app = express()
  app.get('/health', (_req, res) => {
    res.send('up')
  })
  app.use(
    rateLimit(
      [
        { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
        {
          id: 'login',
          match: { route: 'POST /login', identity: 'ip' },
          algorithm: 'sliding_log',
          limit: 5,
          window: '1m',
          onStoreError: 'closed',
        },
      ],
      { clock: options.clock },
    ),
  )
  app.get('/', (_req, res) => {
    res.send('Hello')
  })
  app.post('/login', (_req, res) => {
    res.send('Welcome')
  })
  return app
}
