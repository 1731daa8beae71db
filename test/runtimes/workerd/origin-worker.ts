// The origin: a Hono app behind Tollgate, with a budget of 3 then 1 an hour. A call through a
// service binding carries no `cf` object, so the client address is read from the header the
// calling Worker forwards.
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
        period: '1h',
        burst: 3,
      },
    ],
    { getConnInfo: (c) => ({ remote: { address: c.req.header('CF-Connecting-IP') } }) },
  ),
)
app.get('*', (c) => c.text('ok'))

export default app
