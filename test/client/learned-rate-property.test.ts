/**
 * The client's closed loop against Tollgate for any rule, any start: whatever the algorithm,
 * rate, window and where in a window the client starts, it is never refused once it has learned
 * the policy, and runs within 1.2 × the ideal time plus what `t` in whole seconds costs once.
 * Hono's `app.request` answers in-process, so each case takes no socket and no real time.
 */
import { createClient } from '@tollgate/client'
import { type RuleConfig, rateLimit } from '@tollgate/hono'
import fc from 'fast-check'
import { Hono } from 'hono'
import { expect, it } from 'vitest'
import { idealMs, RATIO, ROUNDING_MS, type TimeRule } from './ideal.js'
import { virtualTime } from './virtual-time.js'

const WORST_JITTER = () => 1 - Number.EPSILON

const rule = fc.oneof(
  fc.record({
    algorithm: fc.constantFrom('token_bucket', 'gcra', 'leaky_bucket'),
    rate: fc.integer({ min: 5, max: 200 }),
    period: fc.constantFrom('1s', '2s', '10s'),
    burst: fc.integer({ min: 1, max: 50 }),
  }),
  fc.record({
    algorithm: fc.constantFrom('fixed_window', 'sliding_window', 'sliding_log'),
    limit: fc.integer({ min: 5, max: 200 }),
    window: fc.constantFrom('1s', '2s', '10s'),
  }),
)

it('never refused, near the ideal time, for any rule and any start in a window', async () => {
  await fc.assert(
    fc.asyncProperty(rule, fc.integer({ min: 0, max: 9_999 }), async (params, offset) => {
      const ruleConfig = { id: 'api', match: { identity: 'ip' }, ...params } as TimeRule
      const start = 1_700_000_000_000 + offset
      const time = virtualTime(start)
      const app = new Hono()
      app.use(
        rateLimit([ruleConfig as RuleConfig], {
          clock: time.clock,
          getConnInfo: () => ({ remote: { address: '192.0.2.1' } }),
        }),
      )
      app.get('*', (c) => c.text('ok'))
      const statuses: number[] = []
      const client = createClient({
        ...time,
        random: WORST_JITTER,
        fetch: async (request) => {
          const response = await app.request(request)
          statuses.push(response.status)
          return response
        },
      })
      // Three quotas' worth: the first is spent at once, the rest at the rule's pace.
      const quota = 'limit' in params ? params.limit : params.burst
      const calls = 3 * Math.max(quota, 20)
      for (let i = 0; i < calls; i++) await client.fetch('http://api.test/items')
      const ideal = idealMs(ruleConfig, start, calls)
      expect(statuses.filter((status) => status !== 200)).toEqual([])
      expect(time.clock.now() - start).toBeLessThanOrEqual(RATIO * ideal + ROUNDING_MS)
    }),
    { numRuns: 40 },
  )
})
