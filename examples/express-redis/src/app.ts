import { rateLimit, type Store } from '@tollgate/express'
import express, { type Express } from 'express'

/**
 * An Express API whose limits live in a shared store (Redis), so they hold across every
 * instance: 100 requests an hour per API key with bursts of 10 (GCRA, one number per key in
 * Redis), and 5 login attempts a minute per IP, refused while Redis is down.
 */
export function createApp(store: Store): Express {
  const app = express()
  app.use(
    rateLimit(
      [
        {
          id: 'per-key',
          match: { identity: 'api_key' },
          algorithm: 'gcra',
          rate: 100,
          period: '1h',
          burst: 10,
        },
        {
          id: 'login',
          match: { route: 'POST /login', identity: 'ip' },
          algorithm: 'sliding_log',
          limit: 5,
          window: '1m',
          onStoreError: 'closed',
        },
      ],
      { store },
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
