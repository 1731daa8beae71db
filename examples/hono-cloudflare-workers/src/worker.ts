/**
 * A Cloudflare Worker: a Hono app limited per client IP (Cloudflare's `CF-Connecting-IP`) on the
 * memory store, which lives in the Worker's isolate: each isolate counts on its own, so this is
 * flood protection at the edge, not an exact global quota.
 */
import { rateLimit } from '@tollgate/hono'
import { Hono } from 'hono'

const app = new Hono()

// Built once, at module scope: the middleware draws no random values and starts no timers
// there, which Workers forbid outside a request.
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
      },
    ],
    { exposeHeaders: true },
  ),
)
app.get('/', (c) => c.text('Hello from the edge'))

export default app
