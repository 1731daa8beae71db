import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { memoryStore } from '../store/memory-store.js'
import { createLimiter } from './create-limiter.js'
import { limiterOperations } from './operator.js'
import type { KeyReport, Verdict } from './types.js'

const LOGIN: RuleConfig = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 5,
  window: '1m',
  penalty: { block: '10m', forbidAfter: 2 },
}
const READS: RuleConfig = {
  id: 'reads',
  match: { identity: 'ip' },
  algorithm: 'sliding_log',
  limit: 10,
  window: '1m',
}
const KEY = 'ip:203.0.113.7'
const FACTS = { method: 'POST', path: '/login', identities: { ip: '203.0.113.7' } }

function setup() {
  const store = memoryStore()
  const limiter = createLimiter({ rules: [LOGIN, READS], store })
  const ops = limiterOperations(limiter)
  const peek = (rule: string, now: number) => {
    const r = ops.peek(KEY, rule, { now }) as KeyReport
    return [r.decision.remaining, r.decision.resetAfterMs, r.offences, r.blockedUntil]
  }
  return { store, limiter, ops, peek }
}

describe('the operator’s calls', () => {
  it('peeks without writing: a key never seen is reported fresh and not created', () => {
    const { store, peek } = setup()
    expect(peek('login', 1000)).toEqual([5, 0, 0, undefined])
    expect(peek('reads', 1000)).toEqual([10, 0, 0, undefined])
    expect(store.size).toBe(0)
  })

  it('peeks at what requests left, and gives units back or charges them (check)', () => {
    const { limiter, ops, peek } = setup()
    for (let i = 0; i < 3; i++) limiter.decide(FACTS, { now: 0 })
    expect(peek('login', 1000)).toEqual([2, 59_000, 0, undefined])
    ops.giveBack(KEY, 'login', 2, { now: 1000 })
    expect(peek('login', 1000)).toEqual([4, 59_000, 0, undefined])
    expect(
      (limiter.check(KEY, 'login', { cost: 3, now: 1000 }) as { remaining: number }).remaining,
    ).toBe(1)
    expect(peek('reads', 1000)).toEqual([7, 59_000, 0, undefined])
  })

  it('blocks a client for a duration, keeps its offences, and unblocks it', () => {
    const { limiter, ops, peek } = setup()
    ops.block(KEY, 'login', '15m', { now: 0 })
    expect(peek('login', 1)).toEqual([5, 0, 0, 900_000])
    const blocked = limiter.decide(FACTS, { now: 1 }) as Verdict
    expect([blocked.allowed, blocked.reason, blocked.deciding?.retryAfterMs]).toEqual([
      false,
      'blocked',
      899_999,
    ])
    // The block lifted, the next denial is a first offence again.
    ops.unblock(KEY, 'login', { now: 2 })
    expect(peek('login', 2)).toEqual([5, 0, 0, undefined])
    expect((limiter.decide(FACTS, { now: 3 }) as Verdict).allowed).toBe(true)
  })

  it('resets a key: its count, its offences and its block', () => {
    const { store, limiter, ops, peek } = setup()
    for (let i = 0; i < 6; i++) limiter.decide(FACTS, { now: 0 })
    // The state as it is (the window ends in a minute), the block beside it.
    expect(peek('login', 0)).toEqual([0, 60_000, 1, 600_000])
    ops.reset(KEY, 'login', { now: 0 })
    expect(peek('login', 0)).toEqual([5, 0, 0, undefined])
    ops.reset(KEY, 'reads', { now: 0 })
    expect(store.size).toBe(0)
  })

  it('refuses, naming what is wrong: a store without the method, a rule without a penalty, bad figures', () => {
    const leanOps = limiterOperations(createLimiter({ rules: [READS], store: mapStore() }))
    for (const call of [
      () => leanOps.peek(KEY, 'reads'),
      () => leanOps.reset(KEY, 'reads'),
      () => leanOps.block(KEY, 'reads', '1m'),
      () => leanOps.unblock(KEY, 'reads'),
    ]) {
      expect(call).toThrow(
        expect.objectContaining({
          code: 'ERR_RL_STORE_UNSUPPORTED',
          message: expect.stringContaining('the store has no'),
        }),
      )
    }
    const { ops } = setup()
    expect(() => ops.block(KEY, 'reads', '1m')).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_RULE', rule: 'reads', field: 'penalty' }),
    )
    expect(() => ops.block(KEY, 'login', 60)).not.toThrow()
    expect(() => ops.block(KEY, 'login', 0)).toThrow(expect.objectContaining({ field: 'duration' }))
    expect(() => ops.block(KEY, 'login', 'a while' as never)).toThrow(
      expect.objectContaining({ field: 'duration' }),
    )
    expect(() => ops.peek(KEY, 'logins')).toThrow(
      expect.objectContaining({ code: 'ERR_RL_UNKNOWN_RULE' }),
    )
    expect(() => ops.peek('', 'login')).toThrow(expect.objectContaining({ field: 'key' }))
    expect(() => ops.giveBack(KEY, 'login', -1)).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_COST' }),
    )
  })
})

it('refuses what is not a limiter made by createLimiter', () => {
  expect(() => limiterOperations({} as never)).toThrow(
    expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'limiter' }),
  )
})
