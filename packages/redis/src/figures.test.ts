import { createLimiter } from '@tollgate/core'
import { describe, expect, it } from 'vitest'
import type { RedisScriptClient } from './client.js'
import { redisStore } from './redis-store.js'

const unused: RedisScriptClient = {
  evalsha: () => Promise.reject(new Error('unexpected EVALSHA')),
  eval: () => Promise.reject(new Error('unexpected EVAL')),
}

const limiterOn = (rule: Record<string, unknown>, layout: 'rule' | 'identity' = 'rule') =>
  createLimiter({
    rules: [{ id: 'per-key', match: { identity: 'api_key' }, ...rule } as never],
    store: redisStore({ client: unused, prefix: 'figures', layout }),
    figures: { 'per-key': { of: () => ({}) } },
  })

describe('per-client figures on Redis', () => {
  it.each([
    { algorithm: 'gcra', rate: 10, burst: 20 },
    { algorithm: 'token_bucket', rate: 10, burst: 20, version: 3, onChange: 'proportional' },
    { algorithm: 'leaky_bucket', rate: 10, burst: 20 },
    { algorithm: 'fixed_window', limit: 10, window: '1m' },
    { algorithm: 'sliding_window', limit: 10, window: '1m', buckets: 6 },
  ])('are taken for a rule whose states the scripts carry: %o', (rule) => {
    expect(() => limiterOn(rule)).not.toThrow()
    expect(() => limiterOn(rule, 'identity')).not.toThrow()
  })

  it.each([
    [{ algorithm: 'sliding_log', limit: 10, window: '1m' }, 'rule', /a sliding_log's states/],
    [{ algorithm: 'fixed_window', limit: 10, window: 'day' }, 'rule', /a calendar window's/],
    [
      { algorithm: 'sliding_window', limit: 10, window: '30s', buckets: 30 },
      'identity',
      /a sliding_window of 30 sub-windows in the identity layout/,
    ],
  ] as const)(
    'are refused at start-up, naming the rule, for %o (layout %s)',
    (rule, layout, why) => {
      const make = () => limiterOn(rule, layout)
      expect(make).toThrow(/rule "per-key": takes its figures per client/)
      expect(make).toThrow(why)
    },
  )
})
