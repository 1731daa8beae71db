import { describe, expect, it } from 'vitest'
import { RateLimitError } from '../errors.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import { failureRule, PAYMENT } from './test-stores.js'
import type { LimiterOptions, StoreErrorContext } from './types.js'

const down = new Error('connect ECONNREFUSED 127.0.0.1:6379')

const FAILING_STORES: readonly (readonly [string, () => Store])[] = [
  [
    'throws',
    () => ({
      consume: () => {
        throw down
      },
      refund: () => {
        throw down
      },
    }),
  ],
  ['rejects', () => ({ consume: () => Promise.reject(down), refund: () => Promise.reject(down) })],
  [
    'throws ERR_RL_STORE_UNAVAILABLE, also from consumeOne',
    () => {
      const unavailable = () => {
        throw new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'timed out')
      }
      return { ...memoryStore(), consume: unavailable, consumeOne: unavailable }
    },
  ],
  ['answers garbage', () => ({ consume: () => ({ decisions: [], at: 0 }), refund: () => {} })],
]

const rule = failureRule
const facts = PAYMENT

describe.each(FAILING_STORES)('a store that %s', (_name, makeStore) => {
  const setup = (rules: RuleConfig[], options: Partial<LimiterOptions> = {}) => {
    const errors: [unknown, StoreErrorContext][] = []
    const limiter = createLimiter({
      rules,
      store: makeStore(),
      onError: (error, context) => errors.push([error, context]),
      ...options,
    })
    return { limiter, errors }
  }

  it('lets the request through when every matching rule fails open, and reports the error', async () => {
    const { limiter, errors } = setup([rule('reads', 'open'), rule('more', 'open')])
    const verdict = await limiter.decide(facts, { now: 0 })
    expect(verdict).toMatchObject({
      allowed: true,
      reason: undefined,
      decisions: [],
      deciding: undefined,
      storeFailed: true,
    })
    expect(errors).toHaveLength(1)
    expect(errors[0]?.[1]).toEqual({
      operation: 'consume',
      rules: ['reads', 'more'],
      failClosed: false,
    })
  })

  it('denies with store-unavailable when one enforcing rule fails closed', async () => {
    const { limiter, errors } = setup([rule('reads', 'open'), rule('payments', 'closed')])
    const verdict = await limiter.decide(facts, { now: 0 })
    expect(verdict).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
      storeFailed: true,
    })
    expect(verdict.deciding).toMatchObject({
      rule: 'payments',
      allowed: false,
      remaining: 0,
      retryAfterMs: 1000,
      storeFailed: true,
    })
    expect(verdict.decisions.map((d) => d.rule)).toEqual(['payments'])
    expect(errors[0]?.[1].failClosed).toBe(true)
  })

  it('uses the configured retry for fail-closed denials, also from check', async () => {
    const { limiter } = setup([rule('payments', 'closed')], { storeErrorRetryAfterMs: 250 })
    expect((await limiter.decide(facts, { now: 0 })).deciding?.retryAfterMs).toBe(250)
    expect(await limiter.check('ip:192.0.2.1', 'payments', { now: 0 })).toMatchObject({
      allowed: false,
      retryAfterMs: 250,
      storeFailed: true,
    })
  })

  it('does not fail closed for a shadow rule', async () => {
    const { limiter } = setup([rule('trial', 'closed', { mode: 'shadow' })])
    expect(await limiter.decide(facts, { now: 0 })).toMatchObject({
      allowed: true,
      storeFailed: true,
    })
  })

  it('admits from check for a fail-open rule', async () => {
    const { limiter, errors } = setup([rule('reads', 'open')])
    expect(await limiter.check('ip:1', 'reads', { now: 0 })).toMatchObject({
      allowed: true,
      storeFailed: true,
    })
    expect(errors).toHaveLength(1)
  })
})

describe('store failure reporting', () => {
  const throwing: Store = {
    consume: () => {
      throw down
    },
    refund: () => {
      throw down
    },
  }

  it('warns through the logger once per distinct message by default', () => {
    const warnings: string[] = []
    const limiter = createLimiter({
      rules: [rule('r', 'open')],
      store: throwing,
      logger: { warn: (m) => warnings.push(m) },
    })
    for (let i = 0; i < 3; i++) limiter.decide(facts, { now: i })
    expect(warnings).toEqual([
      '[tollgate] WARN_STORE_FAILED: store consume failed for r; requests allowed (fail-open): connect ECONNREFUSED 127.0.0.1:6379',
    ])
  })

  it('never throws out of decide, even when onError does', () => {
    const limiter = createLimiter({
      rules: [rule('r', 'closed')],
      store: throwing,
      logger: { warn() {} },
      onError: () => {
        throw new Error('hook broke')
      },
    })
    expect(limiter.decide(facts, { now: 0 })).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
    })
  })

  it('reports a refund that fails instead of throwing it', async () => {
    const contexts: StoreErrorContext[] = []
    const store = memoryStore()
    const limiter = createLimiter({
      rules: [rule('r', 'open')],
      store: { ...store, refund: () => Promise.reject(down) },
      onError: (_error, context) => contexts.push(context),
    })
    const verdict = await limiter.decide(facts, { now: 0 })
    await expect(limiter.refund(verdict, { now: 0 })).resolves.toBeUndefined()
    expect(contexts).toEqual([{ operation: 'refund', rules: ['r'], failClosed: false }])
  })

  it('refuses options that cannot work', () => {
    const rules = [rule('r', 'open')]
    expect(() => createLimiter({ rules, store: {} as Store })).toThrow(/store: expected a Store/)
    expect(() => createLimiter({ rules, clock: {} as never })).toThrow(/clock: expected/)
    expect(() => createLimiter({ rules, timers: { setTimeout } as never })).toThrow(
      /timers: expected \{ setTimeout, clearTimeout \}/,
    )
    expect(() => createLimiter({ rules, storeErrorRetryAfterMs: 0 })).toThrow(
      /storeErrorRetryAfterMs/,
    )
  })
})
