// The lean entry as an edge app writes it: one rule, its one algorithm imported, at module scope.
import { rateLimit, tokenBucket } from '@tollgate/hono/lean'
import { Hono } from 'hono'

const app = new Hono()
app.use(
  rateLimit(
    [{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 }],
    { algorithms: { token_bucket: tokenBucket } },
  ),
)
app.get('*', (c) => c.text('ok'))

export default app
