import { createLimiter } from '@tollgate/core'
import { describe, expect, it } from 'vitest'
import type { RedisScriptClient } from './client.js'
import { redisStore } from './redis-store.js'

const unused: RedisScriptClient = {
  evalsha: () => Promise.reject(new Error('unexpected EVALSHA')),
  eval: () => Promise.reject(new Error('unexpected EVAL')),
}

describe('per-client figures on Redis', () => {
  it('are refused at start-up, naming the rule and the stores that carry them', () => {
    const make = () =>
      createLimiter({
        rules: [
          {
            id: 'per-key',
            match: { identity: 'api_key' },
            algorithm: 'gcra',
            rate: 10,
            burst: 20,
          },
        ],
        store: redisStore({ client: unused, prefix: 'figures' }),
        figures: { 'per-key': { of: () => ({ burst: 100 }) } },
      })
    expect(make).toThrow(/figures\.per-key: rule "per-key" .*memoryStore does; redisStore/)
  })
})
