import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { isRateLimitError } from '../errors.js'
import { loadRulesText } from '../rules/load-text.js'
import type { RuleConfig } from '../rules/types.js'
import { applyCharges } from '../store/apply-charges.js'
import { memoryStore } from '../store/memory-store.js'
import type { Outcome, Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import type { Limiter, RequestFacts, Verdict } from './types.js'

/** A plain Map store built on applyCharges: synchronous, without the consumeOne fast path. */
function mapStore(): Store {
  const states = new Map<string, number[]>()
  const stateOf = (rule: string, key: string, size: number, init: (s: number[]) => void) => {
    const id = JSON.stringify([rule, key])
    let state = states.get(id)
    if (state === undefined) {
      state = new Array<number>(size).fill(0)
      init(state)
      states.set(id, state)
    }
    return state
  }
  return {
    consume(charges, now): Outcome {
      const slots = charges.map((c) =>
        stateOf(c.rule, c.key, c.algorithm.stateSize, (s) => c.algorithm.init(s, 0, now)),
      )
      return {
        decisions: applyCharges(
          charges,
          slots,
          slots.map(() => 0),
          now,
        ),
        at: now,
      }
    },
    refund(charges, chargedAt, now) {
      for (const c of charges) {
        const state = stateOf(c.rule, c.key, c.algorithm.stateSize, (s) =>
          c.algorithm.init(s, 0, now),
        )
        c.algorithm.refund(state, 0, c.cost, chargedAt, now)
      }
    },
  }
}

/** The same store answering through promises, as a remote store does. */
function asyncStore(): Store {
  const inner = mapStore()
  return {
    consume: async (charges, now) => inner.consume(charges, now),
    refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
  }
}

const STORES = [
  ['memory store (consumeOne)', () => memoryStore()],
  ['sync store without consumeOne', mapStore],
  ['async store', asyncStore],
] as const

const SPEC_RULES = loadRulesText(
  `
- id: free-global
  match: { plan: free, identity: api_key }
  algorithm: token_bucket
  rate_per_s: 10
  burst: 20
- id: labels-bulk
  match: { route: "POST /v1/labels:batch", identity: api_key }
  algorithm: token_bucket
  rate_per_s: 10
  burst: 20
  cost_by_route: { "POST /v1/labels:batch": 10 }
- id: login-per-ip
  match: { route: "POST /v1/login", identity: ip }
  algorithm: sliding_log
  limit: 5
  window_s: 60
`,
  'yaml',
)

const merchant = (method: string, path: string, plan = 'free'): RequestFacts => ({
  method,
  path,
  plan,
  identities: { api_key: 'k_123', ip: '203.0.113.7' },
})

describe.each(STORES)('the limiter over a %s', (_name, makeStore) => {
  const limiterOf = (rules: readonly RuleConfig[]) => createLimiter({ rules, store: makeStore() })
  const decideAll = async (limiter: Limiter, facts: RequestFacts, count: number, now: number) => {
    const verdicts: Verdict[] = []
    for (let i = 0; i < count; i++) verdicts.push(await limiter.decide(facts, { now }))
    return verdicts
  }
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

  it('gives back a refunded charge, and nothing once a fixed window has rolled over', async () => {
    const limiter = limiterOf([
      {
        id: 'bucket',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '1m',
        burst: 5,
      },
      {
        id: 'window',
        match: { identity: 'api_key' },
        algorithm: 'fixed_window',
        limit: 5,
        window: '1m',
      },
    ])
    const facts = merchant('GET', '/v1/x')
    const charged = await limiter.decide(facts, { now: 59_000 })
    expect(charged.decisions.map((d) => d.remaining)).toEqual([4, 4])
    await limiter.refund(charged, { now: 59_500 })
    expect(
      (await limiter.decide(facts, { now: 59_500 })).decisions.map((d) => d.remaining),
    ).toEqual([4, 4])
    // Refunding the same verdict twice gives back once.
    await limiter.refund(charged, { now: 59_500 })
    expect(await limiter.check('api_key:k_123', 'window', { cost: 0, now: 59_500 })).toMatchObject({
      remaining: 4,
    })

    const late = await limiter.decide(facts, { now: 59_900 })
    const nextWindow = await limiter.decide(facts, { now: 60_000 })
    expect(nextWindow.decisions.find((d) => d.rule === 'window')?.remaining).toBe(4)
    await limiter.refund(late, { now: 60_100 })
    expect(await limiter.check('api_key:k_123', 'window', { cost: 0, now: 60_100 })).toMatchObject({
      remaining: 4,
    })
    expect(await limiter.check('api_key:k_123', 'bucket', { cost: 0, now: 60_100 })).toMatchObject({
      remaining: 3,
    })
  })

  it('refunds nothing for a denied verdict', async () => {
    const limiter = limiterOf([
      { id: 'w', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 1, window: '1m' },
    ])
    const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }
    await limiter.decide(facts, { now: 0 })
    const denied = await limiter.decide(facts, { now: 0 })
    expect(denied.allowed).toBe(false)
    await limiter.refund(denied, { now: 0 })
    expect(await limiter.check('ip:192.0.2.1', 'w', { cost: 0, now: 0 })).toMatchObject({
      remaining: 0,
    })
  })
})

describe('check', () => {
  const limiter = createLimiter({
    rules: [{ id: 'r', match: { identity: 'ip' }, algorithm: 'gcra', rate: 10, burst: 20 }],
    clock: { now: () => 5000 },
  })

  it('answers synchronously over the memory store, with the Decision of one rule', () => {
    const decision = limiter.check('ip:192.0.2.1', 'r', { cost: 20 })
    expect(decision).not.toBeInstanceOf(Promise)
    expect(decision).toEqual({
      allowed: true,
      remaining: 0,
      limit: 20,
      resetAfterMs: 2000,
      retryAfterMs: undefined,
      rule: 'r',
      mode: 'enforce',
      cost: 20,
      policy: { quota: 10, windowMs: 1000 },
      key: 'ip:192.0.2.1',
      storeFailed: false,
    } satisfies Decision & Record<string, unknown>)
    expect(limiter.check('ip:192.0.2.1', 'r')).toMatchObject({ allowed: false, retryAfterMs: 100 })
  })

  it('refuses unknown rules and costs that can never pass', () => {
    const codeOf = (run: () => unknown): readonly unknown[] => {
      try {
        run()
      } catch (error) {
        return isRateLimitError(error) ? [error.code, error.rule] : ['not a RateLimitError', error]
      }
      return ['no error']
    }
    expect(codeOf(() => limiter.check('k', 'nope'))).toEqual(['ERR_RL_UNKNOWN_RULE', 'nope'])
    expect(codeOf(() => limiter.check('k', 'r', { cost: 21 }))).toEqual([
      'ERR_RL_COST_EXCEEDS_CAPACITY',
      'r',
    ])
    expect(codeOf(() => limiter.check('k', 'r', { cost: -1 }))[0]).toBe('ERR_RL_INVALID_COST')
    expect(codeOf(() => limiter.check('k', 'r', { now: 1.5 }))[0]).toBe('ERR_RL_INVALID_TIME')
  })

  it('reads the injected clock when no time is given', () => {
    const times: number[] = []
    const store = memoryStore()
    const spy = {
      ...store,
      consumeOne: (...args: Parameters<typeof store.consumeOne>) => {
        times.push(args[4])
        return store.consumeOne(...args)
      },
    }
    const clocked = createLimiter({
      rules: limiter.rules,
      store: spy,
      clock: { now: () => 42_000 },
    })
    clocked.check('k', 'r')
    clocked.decide({ method: 'GET', path: '/', identities: { ip: '1' } })
    expect(times).toEqual([42_000, 42_000])
  })
})
