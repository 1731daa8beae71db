import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import { STORES } from './test-stores.js'
import type { Limiter, StoreErrorContext } from './types.js'

const client = { method: 'POST', path: '/v1/chat', identities: { api_key: 'k_1' } }

/** Tokens: 100 per minute, bursts of 1,000; the estimate is the rule's cost unless given. */
const tokens: RuleConfig = {
  id: 'tokens',
  match: { identity: 'api_key' },
  algorithm: 'token_bucket',
  rate: 100,
  period: '1m',
  burst: 1000,
  cost: 300,
  settle: true,
}
/** Requests: counted, never settled. */
const requests: RuleConfig = {
  id: 'requests',
  match: { identity: 'api_key' },
  algorithm: 'fixed_window',
  limit: 50,
  window: '1m',
}
const daily: RuleConfig = {
  id: 'daily',
  match: { identity: 'api_key' },
  algorithm: 'fixed_window',
  limit: 5000,
  window: '1d',
  cost: 300,
  settle: '30s',
}

const left = async (limiter: Limiter, rule: string, now: number) =>
  (await limiter.check('api_key:k_1', rule, { cost: 0, now })).remaining

describe.each(STORES)('settle over a %s', (_name, makeStore) => {
  const limiterOf = (rules: readonly RuleConfig[]) => createLimiter({ rules, store: makeStore() })

  it('replaces the estimate on every settled rule, and leaves the others charged', async () => {
    const limiter = limiterOf([tokens, requests, daily])
    const verdict = await limiter.decide(client, { now: 0 })
    expect(verdict.decisions.map((d) => [d.rule, d.cost])).toEqual([
      ['tokens', 300],
      ['requests', 1],
      ['daily', 300],
    ])
    const settled = await limiter.settle!(verdict, 120, { now: 0 })
    expect(settled).toEqual({ status: 'settled', settled: ['tokens', 'daily'], expired: [] })
    expect(await left(limiter, 'tokens', 0)).toBe(880)
    expect(await left(limiter, 'requests', 0)).toBe(49)
    expect(await left(limiter, 'daily', 0)).toBe(4880)
  })

  it('charges more than the estimate on top, into debt, with the right Retry-After', async () => {
    const limiter = limiterOf([tokens])
    await limiter.decide(client, { now: 0, estimate: 900 })
    const verdict = await limiter.decide(client, { now: 0, estimate: 100 })
    // 1,000 used where 1,100 were: 100 tokens of debt, repaid at 100 a minute.
    await limiter.settle!(verdict, 200, { now: 0 })
    const refused = await limiter.decide(client, { now: 30_000, estimate: 1 })
    expect(refused.allowed).toBe(false)
    expect(refused.deciding).toMatchObject({ remaining: 0, retryAfterMs: 30_600 })
    expect((await limiter.decide(client, { now: 60_600, estimate: 1 })).allowed).toBe(true)
  })

  it('takes the estimate from the request for settled rules only', async () => {
    const limiter = limiterOf([tokens, requests])
    const verdict = await limiter.decide(client, { now: 0, estimate: 700 })
    expect(verdict.decisions.map((d) => d.cost)).toEqual([700, 1])
  })

  it('cancels a reservation whole, once; later settles and refunds do nothing', async () => {
    const limiter = limiterOf([tokens, requests])
    const verdict = await limiter.decide(client, { now: 0 })
    expect(await limiter.cancel!(verdict, { now: 0 })).toMatchObject({ status: 'settled' })
    expect(await left(limiter, 'tokens', 0)).toBe(1000)
    expect(await limiter.settle!(verdict, 900, { now: 0 })).toMatchObject({ status: 'closed' })
    await limiter.refund(verdict, { now: 0 })
    expect(await left(limiter, 'tokens', 0)).toBe(1000)
    expect(await left(limiter, 'requests', 0)).toBe(49)
  })

  it('does nothing after a refund, for a denial, or without a rule that settles', async () => {
    const limiter = limiterOf([{ ...tokens, burst: 300 }, requests])
    const refunded = await limiter.decide(client, { now: 0 })
    await limiter.refund(refunded, { now: 0 })
    expect(await limiter.settle!(refunded, 0, { now: 0 })).toMatchObject({ status: 'closed' })
    await limiter.decide(client, { now: 0 })
    const denied = await limiter.decide(client, { now: 0 })
    expect(denied.allowed).toBe(false)
    expect(await limiter.settle!(denied, 0, { now: 0 })).toMatchObject({ status: 'none' })
    // A verdict whose rules charged nothing to settle (here, of a limiter counting requests).
    const plain = await limiterOf([requests]).decide(client, { now: 0 })
    expect(await limiter.settle!(plain, 0, { now: 0 })).toMatchObject({ status: 'none' })
  })

  it('leaves the estimate of a rule whose time to settle has passed', async () => {
    const limiter = limiterOf([tokens, daily])
    const verdict = await limiter.decide(client, { now: 0 })
    const late = await limiter.settle!(verdict, 0, { now: 30_001 })
    expect(late).toEqual({ status: 'settled', settled: ['tokens'], expired: ['daily'] })
    expect(await left(limiter, 'daily', 30_001)).toBe(4700)
    const older = await limiter.decide(client, { now: 0 })
    expect(await limiter.settle!(older, 0, { now: 600_001 })).toEqual({
      status: 'expired',
      settled: [],
      expired: ['tokens', 'daily'],
    })
  })

  it('settles rules by id; rules not named keep their estimate', async () => {
    const limiter = limiterOf([tokens, daily])
    const verdict = await limiter.decide(client, { now: 0 })
    expect(await limiter.settle!(verdict, { daily: 10 }, { now: 0 })).toMatchObject({
      settled: ['daily'],
    })
    expect(await left(limiter, 'tokens', 0)).toBe(700)
    expect(await left(limiter, 'daily', 0)).toBe(4990)
  })
})

describe('settle: bad input', () => {
  const limiter = createLimiter({ rules: [tokens, requests] })

  it.each([
    [-1, 'ERR_RL_INVALID_COST', /actual cost must be a whole number ≥ 0, got -1/],
    [1.5, 'ERR_RL_INVALID_COST', /got 1.5/],
    [{ tokenz: 1 }, 'ERR_RL_UNKNOWN_RULE', /no rule "tokenz"/],
    [{ requests: 1 }, 'ERR_RL_INVALID_OPTION', /rule "requests" has no settle field/],
    [{ tokens: Number.NaN }, 'ERR_RL_INVALID_COST', /for rule "tokens"/],
  ])('refuses %j with %s, changing nothing', (actual, code, message) => {
    const limiter = createLimiter({ rules: [tokens, requests] })
    const verdict = limiter.decide(client, { now: 0 }) as Awaited<ReturnType<Limiter['decide']>>
    const thrown = (() => {
      try {
        limiter.settle!(verdict, actual as number)
      } catch (error) {
        return error
      }
      return undefined
    })()
    expect(isRateLimitError(thrown) && thrown.code).toBe(code)
    expect((thrown as Error).message).toMatch(message)
    // Still open: a good settle afterwards applies.
    expect(limiter.settle!(verdict, 300, { now: 0 })).toMatchObject({ status: 'settled' })
  })

  it('refuses an estimate that is not a cost, or could never pass, naming the rule', () => {
    expect(() => limiter.decide(client, { estimate: -3 })).toThrow(
      /rule "tokens": the estimate must be a whole number ≥ 0, got -3/,
    )
    expect(() => limiter.decide(client, { estimate: 1001 })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_COST_EXCEEDS_CAPACITY', rule: 'tokens' }),
    )
  })

  it('refuses at start-up a store that cannot settle', () => {
    const store: Store = { consume: () => ({ decisions: [], at: 0 }), refund: () => undefined }
    expect(() => createLimiter({ rules: [tokens], store })).toThrow(
      /rules "tokens" settle their charges \(settle\), but the store has no settle method/,
    )
  })

  it('settles nothing on a limiter whose rules never settle (an update may add one)', async () => {
    const limiter = createLimiter({ rules: [requests] })
    const verdict = await limiter.decide(client, { now: 0 })
    expect(await limiter.settle!(verdict, 0, { now: 0 })).toMatchObject({ status: 'none' })
    expect(await limiter.check('api_key:k_1', 'requests', { cost: 0, now: 0 })).toMatchObject({
      remaining: 49,
    })
  })
})

describe('settle: store failures', () => {
  it('never throws: reports the failure and leaves the estimates', async () => {
    const inner = memoryStore()
    const errors: StoreErrorContext[] = []
    let calls = 0
    const store: Store = {
      consume: (charges, now) => inner.consume(charges, now),
      refund: (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
      settle: async (settlements, chargedAt, now) => {
        calls++
        if (calls === 2) throw new Error('connection reset')
        return inner.settle(settlements, chargedAt, now)
      },
    }
    const limiter = createLimiter({
      rules: [tokens, { ...daily, onStoreError: 'closed' }],
      store,
      onError: (_error, context) => errors.push(context),
    })
    const first = await limiter.decide(client, { now: 0 })
    // One store call settles every rule of the request.
    expect(await limiter.settle!(first, 0, { now: 0 })).toMatchObject({ status: 'settled' })
    expect(calls).toBe(1)
    const second = await limiter.decide(client, { now: 0 })
    expect(await limiter.settle!(second, 0, { now: 0 })).toMatchObject({ status: 'store-failed' })
    expect(errors).toEqual([{ operation: 'settle', rules: ['tokens', 'daily'], failClosed: false }])
    expect(await limiter.check('api_key:k_1', 'tokens', { cost: 0, now: 0 })).toMatchObject({
      remaining: 700,
    })
  })
})

describe('settle: rules', () => {
  const ruleError = (rule: Record<string, unknown>) => {
    try {
      createLimiter({ rules: [rule as never] })
    } catch (error) {
      return (error as Error).message
    }
    return 'accepted'
  }

  it.each([
    [{ ...tokens, settle: 'soon' }, /settle: expected true or a duration to settle within/],
    [{ ...tokens, settle: 60 }, /settle: .*a bare number has no unit/],
    [
      { ...tokens, algorithm: 'leaky_queue' },
      /settle: leaky_queue charges cannot be settled: a queued request's slot is fixed/,
    ],
    [
      { id: 'c', match: {}, algorithm: 'concurrency', limit: 2, settle: true },
      /settle: concurrency charges cannot be settled: a concurrency slot is held until released/,
    ],
  ])('refuses %j naming the rule and field', (rule, message) => {
    expect(ruleError(rule)).toMatch(message)
  })

  it('accepts settle in a rules file, as true or a duration', async () => {
    const { parseRules } = await import('../rules/parse-rules.js')
    const [a, b] = parseRules([
      { ...tokens, settle: true, period: undefined, period_s: 60, rate: 100 },
      { ...daily, settle: '2m' },
    ])
    expect([a?.settle, b?.settle]).toEqual([600_000, 120_000])
  })
})
