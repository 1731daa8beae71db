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
import { rateLimit, trustedProxies } from './lean.js'

const FACTORIES = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  fixed_window: fixedWindow,
  sliding_log: slidingLog,
  sliding_window: slidingWindow,
} as const
const NAMES = Object.keys(FACTORIES) as (keyof typeof FACTORIES)[]
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

type Request = {
  readonly ip: number
  readonly advanceMs: number
  readonly path: string
  /** An `X-Forwarded-For` line, read only where a proxy is trusted. */
  readonly forwardedFor: string | null
}

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
  for (const { ip, advanceMs, path, forwardedFor } of requests) {
    clock.advance(advanceMs)
    const env = { incoming: { socket: { remoteAddress: `192.0.2.${ip}` } } }
    const headers: Record<string, string> =
      forwardedFor === null ? {} : { 'x-forwarded-for': forwardedFor }
    const response = await app.request(path, { headers }, env)
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
      forwardedFor: fc.constantFrom(null, '198.51.100.7', '2001:db8::1, 198.51.100.8', 'junk'),
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
          // The lean entry reads forwarding headers with the parser the app passes.
          { trustProxy: 1, proxies: trustedProxies },
          { trustProxy: ['192.0.2.1', '192.0.2.2'], proxies: trustedProxies },
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
    // 60 traces of up to a few dozen requests on two apps: seconds on a loaded machine.
  }, 60_000)

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

  it('refuses at start-up a trustProxy that trusts a proxy without the proxies parser, naming it', () => {
    const rules = [ruleOf('token_bucket', 5, 1000)]
    const algorithms = { token_bucket: tokenBucket }
    for (const trustProxy of [true, 1, 'loopback', ['10.0.0.0/8']]) {
      expect(() => rateLimit(rules, { algorithms, trustProxy, logger: false })).toThrow(
        /trustProxy: .*proxies: trustedProxies/,
      )
      expect(() =>
        rateLimit(rules, { algorithms, trustProxy, proxies: trustedProxies, logger: false }),
      ).not.toThrow()
    }
    // Settings that trust no proxy read no forwarding header: nothing to parse them with.
    for (const trustProxy of [false, 0, '', []]) {
      expect(() => rateLimit(rules, { algorithms, trustProxy, logger: false })).not.toThrow()
    }
    expect(() => rateLimit(rules, { algorithms, proxies: 'x-forwarded-for' as never })).toThrow(
      /proxies: expected trustedProxies/,
    )
  })

  it('refuses an unknown option with the closest known one, as the default entry does', () => {
    const rules = [ruleOf('token_bucket', 5, 1000)]
    const algorithms = { token_bucket: tokenBucket }
    const options = (extra: object) => ({ algorithms, ...extra }) as never
    expect(() => rateLimit(rules, options({ trustproxy: true }))).toThrow(
      /did you mean "trustProxy"/,
    )
    // express-rate-limit's names are refused too, with the list of known options instead of
    // their Tollgate equivalent: those texts stay out of the lean bundle.
    expect(() => rateLimit(rules, options({ windowMs: 60_000 }))).toThrow(
      /unknown option "windowMs": known options: .*algorithms/,
    )
    expect(() => defaultRateLimit(rules, { windowMs: 60_000 } as never)).toThrow(/window here/)
  })
})
