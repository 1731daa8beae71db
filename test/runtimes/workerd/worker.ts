/**
 * A Cloudflare Worker: a Hono app behind `@tollgate/hono` with the default memory store, as a
 * user would deploy it. Bundled by workerd.test.ts for a platform with no Node built-ins.
 */
import { rateLimit } from '@tollgate/hono'
import { Hono } from 'hono'

const app = new Hono()

app.use(
  rateLimit(
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
    { skip: (c) => c.req.path === '/health', refund: 'failed', exposeHeaders: true },
  ),
)
app.get('/health', (c) => c.text('up'))
app.get('/fail', (c) => c.text('failed', 500))
app.get('*', (c) => c.text('ok'))

export default app
