/**
 * A Cloudflare Worker: a Hono app limited per client IP (`CF-Connecting-IP`) with one count for
 * the whole world. Each client's state lives in a Durable Object of its own (`TollgateLimiter`,
 * exported below), which every Worker in every location asks: 10 a minute with bursts of 5,
 * exactly, wherever the requests land.
 */

import { env } from 'cloudflare:workers'
import { durableObjectStore } from '@tollgate/cloudflare'
import { rateLimit } from '@tollgate/hono'
import { Hono } from 'hono'

// The object class the LIMITER binding names (wrangler.toml): the app exports it.
export { TollgateLimiter } from '@tollgate/cloudflare'

const app = new Hono()

app.use(
  rateLimit(
    [
      {
        id: 'edge-per-ip',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 10,
        period: '1m',
        burst: 5,
        // The object unreachable (a deploy restarting it, an outage): admit, as a CDN would.
        onStoreError: 'open',
      },
    ],
    { store: durableObjectStore(env.LIMITER), exposeHeaders: true },
  ),
)
app.get('/', (c) => c.text('Hello from the edge'))

export default app
