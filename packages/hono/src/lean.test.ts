import {
  type AlgorithmName,
  fixedWindow,
  gcra,
  leakyBucket,
  type RuleConfig,
  RuleValidationError,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { manualClock } from '@tollgate/test-utils'
import fc from 'fast-check'
import { Hono, type MiddlewareHandler } from 'hono'
import { describe, expect, it } from 'vitest'
import { rateLimit as defaultRateLimit } from './index.js'
import { rateLimit } from './lean.js'

const FACTORIES = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  fixed_window: fixedWindow,
  sliding_log: slidingLog,
  sliding_window: slidingWindow,
} as const
const NAMES = Object.keys(FACTORIES) as AlgorithmName[]
const RATE = ['token_bucket', 'gcra', 'leaky_bucket']
const START = Date.UTC(2026, 0, 1)

const ruleOf = (name: AlgorithmName, quota: number, spanMs: number, id = 'r'): RuleConfig =>
  (RATE.includes(name)
    ? {
        id,
        match: { identity: 'ip' },
        algorithm: name,
        rate: quota,
        period: `${spanMs}ms`,
        burst: quota,
      }
    : {
        id,
        match: { identity: 'ip' },
        algorithm: name,
        limit: quota,
        window: `${spanMs}ms`,
      }) as RuleConfig

type Request = { readonly ip: number; readonly advanceMs: number; readonly path: string }

/** Every status and header an app answers a run of requests with, on its own clock. */
async function answers(
  build: (clock: ReturnType<typeof manualClock>) => MiddlewareHandler,
  requests: readonly Request[],
) {
  const clock = manualClock(START)
  const app = new Hono()
  app.use(build(clock))
  app.get('*', (c) => c.text('ok'))
  const seen = []
  for (const { ip, advanceMs, path } of requests) {
    clock.advance(advanceMs)
    const env = { incoming: { socket: { remoteAddress: `192.0.2.${ip}` } } }
    const response = await app.request(path, {}, env)
    seen.push({
      status: response.status,
      headers: [...response.headers],
      body: await response.text(),
    })
  }
  return seen
}

describe('@tollgate/hono/lean', () => {
  it('answers every request as @tollgate/hono does: same statuses, fields and bodies', async () => {
    const request = fc.record({
      ip: fc.integer({ min: 1, max: 3 }),
      advanceMs: fc.integer({ min: 0, max: 1500 }),
      path: fc.constantFrom('/', '/v1/jobs', '/v1/login'),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(1000, 2000, 60_000),
        fc.constantFrom<Record<string, unknown>>(
          {},
          { standardHeaders: 'draft-7' },
          { standardHeaders: 'draft-11', legacyHeaders: false },
          { refund: 'failed' },
        ),
        fc.array(request, { minLength: 1, maxLength: 12 }),
        async (names, quota, spanMs, options, requests) => {
          const rules = names.map((name, i) => ruleOf(name, quota + i, spanMs, `rule-${i}`))
          const algorithms = Object.fromEntries(names.map((name) => [name, FACTORIES[name]]))
          const lean = await answers(
            (clock) => rateLimit(rules, { clock, logger: false, algorithms, ...options }),
            requests,
          )
          const full = await answers(
            (clock) => defaultRateLimit(rules, { clock, logger: false, ...options }),
            requests,
          )
          expect(lean).toEqual(full)
        },
      ),
      { numRuns: 60 },
    )
  })

  it('refuses at start-up a rule naming an algorithm it was not given, naming rule and field', () => {
    const rules = [
      ruleOf('token_bucket', 5, 1000, 'per-ip'),
      ruleOf('sliding_log', 5, 1000, 'login'),
    ]
    let thrown: unknown
    try {
      rateLimit(rules, { algorithms: { token_bucket: tokenBucket } })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(RuleValidationError)
    expect((thrown as RuleValidationError).issues).toEqual([
      expect.objectContaining({ rule: 'login', field: 'algorithm' }),
    ])
    expect(String((thrown as Error).message)).toContain('sliding_log')
  })

  it('refuses rules without the algorithms option, naming it', () => {
    const rules = [ruleOf('token_bucket', 5, 1000)]
    // A JavaScript caller can leave out what the types require.
    const call = rateLimit as (rules: RuleConfig[], options?: object) => MiddlewareHandler
    expect(() => call(rules)).toThrow(/algorithms: expected/)
    expect(() => call(rules, { algorithms: 'token_bucket' })).toThrow(/algorithms: expected/)
  })
})
