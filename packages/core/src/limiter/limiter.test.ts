import { describe, expect, it } from 'vitest'
import { loadRulesText } from '../rules/load-text.js'
import { SPEC_YAML } from '../rules/spec-rules.fixture.js'
import type { RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'
import { decideTimes, STORES } from './test-stores.js'
import type { RequestFacts, Verdict } from './types.js'

const SPEC_RULES = loadRulesText(SPEC_YAML, 'yaml')

const merchant = (method: string, path: string, plan = 'free'): RequestFacts => ({
  method,
  path,
  plan,
  identities: { api_key: 'k_123', ip: '203.0.113.7' },
})

describe.each(STORES)('the limiter over a %s', (_name, makeStore) => {
  const limiterOf = (rules: readonly RuleConfig[]) =>
    createLimiter({ rules, store: makeStore(), customIdentities: ['account'] })
  const decideAll = decideTimes
  const admitted = (verdicts: Verdict[]) => verdicts.filter((v) => v.allowed).length

  it("replays the spec's Free-plan burst: 20/5 at 0, 5/3 at 0.5 s, 19 left at 2.5 s", async () => {
    const limiter = limiterOf(SPEC_RULES)
    const facts = merchant('GET', '/v1/quotes')
    const first = await decideAll(limiter, facts, 25, 0)
    expect(admitted(first)).toBe(20)
    expect(first.slice(0, 20).every((v) => v.allowed)).toBe(true)
    expect(first[24]).toMatchObject({ allowed: false, reason: 'limit' })
    expect(first[24]?.deciding).toMatchObject({
      rule: 'free-global',
      remaining: 0,
      retryAfterMs: 100,
    })
    const second = await decideAll(limiter, facts, 8, 500)
    expect(second.map((v) => v.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ])
    const [last] = await decideAll(limiter, facts, 1, 2500)
    expect(last?.allowed).toBe(true)
    expect(last?.deciding).toMatchObject({ rule: 'free-global', remaining: 19, limit: 20 })
    expect(last?.decisions.map((d) => d.rule)).toEqual(['free-global'])
  })

  it('charges a bulk-label call 10 under labels-bulk and 1 under free-global', async () => {
    const limiter = limiterOf(SPEC_RULES)
    const bulk = merchant('POST', '/v1/labels:batch')
    const [one, two, three] = await decideAll(limiter, bulk, 3, 0)
    expect(one?.decisions.map((d) => [d.rule, d.cost, d.remaining])).toEqual([
      ['free-global', 1, 19],
      ['labels-bulk', 10, 10],
    ])
    expect(two?.deciding).toMatchObject({ rule: 'labels-bulk', remaining: 0 })
    // The third needs 10 tokens at 10 per second: one second. free-global is left untouched.
    expect(three).toMatchObject({ allowed: false, reason: 'limit' })
    expect(three?.deciding).toMatchObject({ rule: 'labels-bulk', retryAfterMs: 1000 })
    expect(three?.decisions.find((d) => d.rule === 'free-global')).toMatchObject({
      allowed: true,
      cost: 1,
      remaining: 18,
    })
    const [afterwards] = await decideAll(limiter, bulk, 1, 1000)
    expect(afterwards?.allowed).toBe(true)
  })

  it('limits logins with a sliding log of 5 per 60 s per account and IP', async () => {
    const limiter = limiterOf([
      {
        id: 'login',
        match: { route: 'POST /v1/login', identity: ['account', 'ip'] },
        algorithm: 'sliding_log',
        limit: 5,
        window: '60s',
        onStoreError: 'closed',
      },
    ])
    const attempt = (account: string, ip: string, now: number) =>
      limiter.decide({ method: 'POST', path: '/v1/login', identities: { account, ip } }, { now })
    for (let second = 1; second <= 5; second++) {
      expect((await attempt('alice', '198.51.100.1', second * 1000)).allowed).toBe(true)
    }
    const denied = await attempt('alice', '198.51.100.1', 10_000)
    expect(denied.deciding).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 51_000 })
    expect(denied.deciding?.key).toBe('account#5:alice&ip#12:198.51.100.1')
    // Hammering is not logged: the retry time does not move.
    expect((await attempt('alice', '198.51.100.1', 20_000)).deciding?.retryAfterMs).toBe(41_000)
    // The same account from another IP, and another account from the same IP, count apart.
    expect((await attempt('alice', '198.51.100.2', 20_000)).allowed).toBe(true)
    expect((await attempt('bob', '198.51.100.1', 20_000)).allowed).toBe(true)
    expect((await attempt('alice', '198.51.100.1', 61_000)).allowed).toBe(true)
  })

  it('is all-or-nothing: a request denied by one rule takes nothing from another', async () => {
    const limiter = limiterOf([
      {
        id: 'rate',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '1m',
        burst: 10,
      },
      {
        id: 'daily',
        match: { identity: 'api_key' },
        algorithm: 'fixed_window',
        limit: 2,
        window: '1 day',
      },
    ])
    const facts = merchant('GET', '/v1/quotes')
    const verdicts = await decideAll(limiter, facts, 5, 1000)
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, false, false, false])
    expect(verdicts[4]?.deciding?.rule).toBe('daily')
    expect(verdicts[4]?.decisions.find((d) => d.rule === 'rate')).toMatchObject({
      allowed: true,
      cost: 1,
      remaining: 8,
    })
    expect(await limiter.check('api_key:k_123', 'rate', { cost: 0, now: 1000 })).toMatchObject({
      remaining: 8,
    })
  })

  it('never denies a request a rule charges nothing, and still charges the other rules', async () => {
    const limiter = createLimiter({
      rules: [
        {
          id: 'global',
          match: { identity: 'ip' },
          algorithm: 'gcra',
          rate: 10,
          burst: 10,
          costByRoute: { 'GET /health': 0 },
        },
        {
          id: 'health',
          match: { identity: 'ip', route: 'GET /health' },
          algorithm: 'fixed_window',
          limit: 2,
          window: '1h',
        },
      ],
    })
    const at = (path: string, now: number) =>
      limiter.decide({ method: 'GET', path, identities: { ip: '203.0.113.7' } }, { now })
    for (let i = 0; i < 10; i++) await at('/orders', 10_000)
    // The clock steps back two seconds: the key looks more than drained to the global rule.
    expect(await at('/orders', 8_000)).toMatchObject({ allowed: false })
    const health = []
    for (let i = 0; i < 4; i++) health.push((await at('/health', 8_000)).allowed)
    expect(health).toEqual([true, true, false, false])
  })

  it('decides shadow rules, reports them in shadowDenied, and never denies because of them', async () => {
    const limiter = limiterOf([
      {
        id: 'new-limit',
        match: { identity: 'api_key' },
        algorithm: 'fixed_window',
        limit: 1,
        window: '1m',
        mode: 'shadow',
      },
      {
        id: 'current',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 20,
      },
    ])
    const [first, second] = await decideAll(limiter, merchant('GET', '/v1/x'), 2, 0)
    expect(first?.shadowDenied).toEqual([])
    expect(second).toMatchObject({ allowed: true, reason: undefined })
    expect(second?.shadowDenied.map((d) => [d.rule, d.mode, d.allowed])).toEqual([
      ['new-limit', 'shadow', false],
    ])
    expect(second?.deciding).toMatchObject({ rule: 'current', remaining: 18 })
    expect(second?.decisions.map((d) => d.rule)).toEqual(['new-limit', 'current'])
  })

  it('counts a request without the identity under its IP, or refuses it, as configured', async () => {
    const rules = (onMissingIdentity: 'ip' | 'deny'): RuleConfig[] => [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'fixed_window',
        limit: 2,
        window: '1m',
        onMissingIdentity,
      },
    ]
    const anonymous = { method: 'GET', path: '/', identities: { ip: '203.0.113.9' } }
    const fallback = limiterOf(rules('ip'))
    const verdicts = await decideAll(fallback, anonymous, 3, 0)
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, false])
    expect(verdicts[0]?.deciding?.key).toBe('ip:203.0.113.9')
    const strict = limiterOf(rules('deny'))
    const refused = await strict.decide(anonymous, { now: 0 })
    expect(refused).toMatchObject({ allowed: false, reason: 'missing-identity' })
    expect(refused.deciding).toMatchObject({
      rule: 'per-key',
      retryAfterMs: undefined,
      key: undefined,
    })
    // An empty value is missing too, and the refused request charged nothing.
    expect(
      (await strict.decide({ ...anonymous, identities: { api_key: '' } }, { now: 0 })).reason,
    ).toBe('missing-identity')
    expect(await strict.check('ip:203.0.113.9', 'per-key', { cost: 0, now: 0 })).toMatchObject({
      remaining: 2,
    })
  })
})
