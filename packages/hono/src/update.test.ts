import type { RuleConfig } from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import {
  clockReader,
  createRateLimit,
  mapStore,
  rateLimit,
  rulesUpdater,
  tokenBucket,
} from './index.js'

const perIp = (burst: number): RuleConfig[] => [
  {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1h',
    burst,
  },
]
const options = {
  clock: manualClock(Date.UTC(2026, 0, 1)),
  legacyHeaders: true,
  getConnInfo: () => ({ remote: { address: '203.0.113.7' } }),
}

describe('@tollgate/hono: middleware.update', () => {
  it('is the kit’s: a raised burst keeps what the client used', async () => {
    const limit = rateLimit(perIp(3), options)
    const app = new Hono()
    app.use(limit)
    app.get('/', (c) => c.text('ok'))
    await app.request('/')
    await app.request('/')
    limit.update(perIp(6))
    const res = await app.request('/')
    expect([
      res.headers.get('x-ratelimit-limit'),
      res.headers.get('x-ratelimit-remaining'),
    ]).toEqual(['6', '3'])
  })

  it('is refused, naming the part, on a middleware composed without it; works with it', async () => {
    const algorithms = { token_bucket: tokenBucket }
    const plain = { ...options, legacyHeaders: false }
    const bare = createRateLimit({ algorithms, store: mapStore, clock: clockReader })(
      perIp(3),
      plain,
    )
    expect(() => bare.update(perIp(6))).toThrow(
      /update: needs update: rulesUpdater in createRateLimit/,
    )
    const limit = createRateLimit({
      algorithms,
      store: mapStore,
      update: rulesUpdater,
      clock: clockReader,
    })(perIp(3), plain)
    // mapStore carries no state: a change of figures is refused, naming the store.
    expect(() => limit.update(perIp(6))).toThrow(/store: cannot carry.*"per-ip"/)
  })
})
