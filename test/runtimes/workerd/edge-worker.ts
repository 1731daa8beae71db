// The edge entry as a Worker writes it: a limit per client address and a tighter one on POST,
// their algorithms imported, at module scope.
import { rateLimit, slidingLog, tokenBucket } from '@tollgate/hono/edge'
import { Hono } from 'hono'

const app = new Hono()
app.use(
  rateLimit(
    [
      { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 3 },
      {
        id: 'writes',
        match: { identity: 'ip', method: 'POST' },
        algorithm: 'sliding_log',
        limit: 1,
        window: '1m',
      },
    ],
    { algorithms: { token_bucket: tokenBucket, sliding_log: slidingLog } },
  ),
)
app.all('*', (c) => c.text('ok'))

export default app
