// The express-rate-limit facade over the Redis store: two processes (two apps, two clients)
// share one key's count, exactly, in Tollgate's epoch-aligned fixed window.

import rateLimit from '@tollgate/express-rate-limit'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { REDIS_URL, redisForTest } from '@tollgate/test-utils'
import express from 'express'
import { Redis } from 'ioredis'
import request from 'supertest'
import { afterAll, describe, expect, it } from 'vitest'

const available = await redisForTest('express-rate-limit facade over Redis')
const clients: Redis[] = []

afterAll(() => {
  for (const client of clients) client.disconnect()
})

function processApp(prefix: string) {
  const redis = new Redis(REDIS_URL)
  clients.push(redis)
  const app = express()
  app.use(
    rateLimit({
      limit: 3,
      windowMs: 24 * 3_600_000,
      keyGenerator: () => 'shared-client',
      store: redisStore({ client: ioredisClient(redis), prefix }),
      validate: { unsharedStore: false },
    }),
  )
  app.get('/', (_req, res) => {
    res.send('ok')
  })
  return app
}

describe.runIf(available)('express-rate-limit facade with the Redis store', () => {
  it('shares one count between processes', async () => {
    const prefix = `erl-facade-${process.pid}-${Date.now()}:`
    const [a, b] = [processApp(prefix), processApp(prefix)]
    const statuses = []
    for (const app of [a, b, a, b, a]) statuses.push((await request(app).get('/')).status)
    expect(statuses).toEqual([200, 200, 200, 429, 429])
  })
})
