/**
 * What Tollgate writes, read back by `@tollgate/core/fields`: random rules of every algorithm
 * behind the Hono adapter (public `rateLimit` only), every header option, random traffic on a
 * manual clock. The oracle is the core's own `step` on the same algorithm: each response must
 * read back as exactly the decision it reports.
 */
import {
  fixedWindow,
  gcra,
  leakyBucket,
  type RuleConfig,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { readRateLimitFields } from '@tollgate/core/fields'
import { type Algorithm, type AlgorithmState, type Decision, step } from '@tollgate/core/store'
import { rateLimit } from '@tollgate/hono'
import { manualClock } from '@tollgate/test-utils'
import fc from 'fast-check'
import { Hono } from 'hono'
import { expect, it } from 'vitest'

const T0 = 1_800_000_000_123 // not on a whole second: epoch resets round

type Shape =
  | {
      kind: 'rate'
      algorithm: 'token_bucket' | 'gcra' | 'leaky_bucket'
      rate: number
      periodS: number
      burst: number
    }
  | {
      kind: 'window'
      algorithm: 'fixed_window' | 'sliding_log' | 'sliding_window'
      limit: number
      windowS: number
    }

const shape: fc.Arbitrary<Shape> = fc.oneof(
  fc.record({
    kind: fc.constant('rate' as const),
    algorithm: fc.constantFrom('token_bucket' as const, 'gcra' as const, 'leaky_bucket' as const),
    rate: fc.integer({ min: 1, max: 20 }),
    periodS: fc.integer({ min: 1, max: 60 }),
    burst: fc.integer({ min: 1, max: 20 }),
  }),
  fc.record({
    kind: fc.constant('window' as const),
    algorithm: fc.constantFrom(
      'fixed_window' as const,
      'sliding_log' as const,
      'sliding_window' as const,
    ),
    limit: fc.integer({ min: 1, max: 20 }),
    windowS: fc.integer({ min: 1, max: 60 }),
  }),
)

function ruleOf(s: Shape): RuleConfig {
  const base = { id: 'round-trip', match: { identity: 'ip' as const } }
  return s.kind === 'rate'
    ? { ...base, algorithm: s.algorithm, rate: s.rate, period: `${s.periodS}s`, burst: s.burst }
    : { ...base, algorithm: s.algorithm, limit: s.limit, window: `${s.windowS}s` }
}

function algorithmOf(s: Shape): Algorithm {
  if (s.kind === 'rate') {
    const params = { rate: s.rate, periodMs: s.periodS * 1000, burst: s.burst }
    return { token_bucket: tokenBucket, gcra, leaky_bucket: leakyBucket }[s.algorithm](params)
  }
  const params = { limit: s.limit, windowMs: s.windowS * 1000 }
  return { fixed_window: fixedWindow, sliding_log: slidingLog, sliding_window: slidingWindow }[
    s.algorithm
  ](params)
}

/** The seconds Tollgate sends as `t` / `reset`: the retry time when denied, else until full. */
const resetSeconds = (d: Decision) =>
  d.allowed ? Math.ceil(d.resetAfterMs / 1000) : Math.max(1, Math.ceil(d.retryAfterMs! / 1000))

const options = fc.constantFrom(
  ...(
    ['draft-6', 'draft-7', 'draft-8', 'draft-9', 'draft-10', 'draft-11', 'draft-12'] as const
  ).map((d) => ({
    standardHeaders: d,
    legacyReset: 'epoch-seconds' as const,
  })),
  // X-RateLimit-* alone, as a GitHub-style client reads them.
  { standardHeaders: false as const, legacyHeaders: true, legacyReset: 'epoch-seconds' as const },
  { standardHeaders: false as const, legacyHeaders: true, legacyReset: 'delta-seconds' as const },
)

it('every field Tollgate writes reads back as the decision behind it', async () => {
  await fc.assert(
    fc.asyncProperty(
      shape,
      options,
      fc.array(fc.nat(5000), { minLength: 1, maxLength: 25 }),
      async (s, opts, gaps) => {
        const clock = manualClock(T0)
        const app = new Hono()
        app.use(
          rateLimit([ruleOf(s)], {
            ...opts,
            clock,
            getConnInfo: () => ({ remote: { address: '203.0.113.1' } }),
          }),
        )
        app.get('*', (c) => c.text('ok'))
        const algorithm = algorithmOf(s)
        let state: AlgorithmState | undefined
        for (const gap of gaps) {
          clock.advance(gap)
          const now = clock.now()
          const result = step(algorithm, state, 1, now)
          state = result.state
          const d = result.decision
          const res = await app.request('/')
          expect(res.status).toBe(d.allowed ? 200 : 429)
          const fields = readRateLimitFields(res.headers, now)
          expect(fields.retryAfterMs).toBe(d.allowed ? undefined : resetSeconds(d) * 1000)
          const { quota, windowMs } = algorithm.policy
          const policy = { quota, windowMs, ...(d.limit === quota ? {} : { burst: d.limit }) }
          const reset = resetSeconds(d) * 1000
          if (opts.standardHeaders === false) {
            const resetMs =
              opts.legacyReset === 'delta-seconds'
                ? Math.ceil(d.resetAfterMs / 1000) * 1000
                : Math.ceil((now + d.resetAfterMs) / 1000) * 1000 - now
            expect(fields).toMatchObject({ form: 'x-ratelimit' })
            expect(fields.policies).toEqual([
              { name: '', limit: d.limit, remaining: d.remaining, resetMs },
            ])
          } else if (opts.standardHeaders === 'draft-6' || opts.standardHeaders === 'draft-7') {
            expect(fields.form).toBe(opts.standardHeaders)
            expect(fields.policies).toEqual([
              { name: '', ...policy, limit: d.limit, remaining: d.remaining, resetMs: reset },
            ])
          } else {
            // Draft 12 adds what the request cost (one unit here) on an admitting rule.
            const cost = opts.standardHeaders === 'draft-12' && d.allowed ? { cost: 1 } : {}
            expect(fields.form).toBe('current')
            expect(fields.policies).toEqual([
              { name: 'round-trip', ...policy, remaining: d.remaining, resetMs: reset, ...cost },
            ])
          }
        }
      },
    ),
    { numRuns: 150 },
  )
})

it('pk: each partition reads back with the key Tollgate sent, two clients two partitions', async () => {
  const clock = manualClock(T0)
  const app = new Hono()
  let address = '203.0.113.1'
  app.use(
    rateLimit(
      [
        {
          id: 'per-ip',
          match: { identity: 'ip' },
          algorithm: 'gcra',
          rate: 5,
          period: '1s',
          burst: 5,
        },
      ],
      {
        clock,
        partitionKey: true,
        getConnInfo: () => ({ remote: { address } }),
      },
    ),
  )
  app.get('*', (c) => c.text('ok'))
  const keys: string[] = []
  for (const client of ['203.0.113.1', '198.51.100.2']) {
    address = client
    const res = await app.request('/')
    const [policy] = readRateLimitFields(res.headers, clock.now()).policies
    expect(policy).toMatchObject({ name: 'per-ip', quota: 5, windowMs: 1000, remaining: 4 })
    expect(res.headers.get('ratelimit')).toContain(`;pk=:${policy!.partitionKey}:`)
    keys.push(policy!.partitionKey!)
  }
  expect(new Set(keys).size).toBe(2)
})
