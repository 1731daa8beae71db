import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { isRateLimitError } from '../errors.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import { createLimiter } from './create-limiter.js'
import { STORES } from './test-stores.js'

const merchant = { method: 'GET', path: '/v1/x', identities: { api_key: 'k_123' } }

describe.each(STORES)('refunds over a %s', (_name, makeStore) => {
  const limiterOf = (rules: readonly RuleConfig[]) => createLimiter({ rules, store: makeStore() })

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
    const facts = merchant
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

  it('gives a sliding window counter charge back only while it still weighs', async () => {
    const limiter = limiterOf([
      {
        id: 'swc',
        match: { identity: 'api_key' },
        algorithm: 'sliding_counter',
        limit: 10,
        window: '1m',
      },
    ])
    const left = async (now: number) =>
      (await limiter.check('api_key:k_123', 'swc', { cost: 0, now })).remaining
    // Charged in window [0, 60 s), refunded in the next one, where it weighs as the previous count.
    const early = await limiter.decide(merchant, { now: 30_000 })
    await limiter.decide(merchant, { now: 61_000 })
    expect(await left(61_000)).toBe(8)
    await limiter.refund(early, { now: 61_000 })
    expect(await left(61_000)).toBe(9)
    // Charged at 62 s, refunded two windows on: it weighs nothing by then, so nothing comes back.
    const old = await limiter.decide(merchant, { now: 62_000 })
    await limiter.decide(merchant, { now: 185_000 })
    expect(await left(185_000)).toBe(9)
    await limiter.refund(old, { now: 185_000 })
    expect(await left(185_000)).toBe(9)
  })

  it('gives a sliding log charge back only while it is inside the window', async () => {
    const limiter = limiterOf([
      {
        id: 'log',
        match: { identity: 'api_key' },
        algorithm: 'sliding_log',
        limit: 3,
        window: '1m',
      },
    ])
    const left = async (now: number) =>
      (await limiter.check('api_key:k_123', 'log', { cost: 0, now })).remaining
    const first = await limiter.decide(merchant, { now: 0 })
    const second = await limiter.decide(merchant, { now: 30_000 })
    await limiter.refund(second, { now: 40_000 })
    expect(await left(40_000)).toBe(2)
    await limiter.decide(merchant, { now: 50_000 })
    // The first entry has left the window: refunding it now gives nothing back.
    await limiter.refund(first, { now: 60_500 })
    expect(await left(60_500)).toBe(2)
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
    expect(codeOf(() => limiter.check('k', 'r', { now: -1 }))[0]).toBe('ERR_RL_INVALID_TIME')
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
