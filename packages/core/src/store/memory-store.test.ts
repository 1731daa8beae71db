import { afterEach, describe, expect, it, vi } from 'vitest'
import { carryState } from '../algorithms/carry.js'
import { fixedWindow, gcra, tokenBucket } from '../algorithms/index.js'
import { MAX_TIME_MS } from '../algorithms/integer.js'
import { memoryStore } from './memory-store.js'
import type { Charge } from './types.js'

const T0 = 1_700_000_000_000
const perMinute = tokenBucket({ rate: 5, periodMs: 60_000, burst: 5 })
const charge = (key: string, cost = 1, rule = 'per-ip', shadow = false): Charge => ({
  rule,
  algorithm: perMinute,
  key,
  cost,
  shadow,
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('memoryStore', () => {
  it('holds a flood of distinct keys at the bound, and an active key keeps its state through it', () => {
    const setTimer = vi.spyOn(globalThis, 'setTimeout')
    const setRepeating = vi.spyOn(globalThis, 'setInterval')
    const store = memoryStore({ maxKeys: 1000 })
    for (let i = 0; i < 5; i++) store.consumeOne('per-ip', perMinute, 'ip:victim', 1, T0)
    expect(store.consumeOne('per-ip', perMinute, 'ip:victim', 1, T0).allowed).toBe(false)

    let now = T0
    const allowedAt: number[] = []
    for (let i = 0; i < 50_000; i++) {
      now = T0 + i // 50 s of flood, one spoofed key a millisecond
      expect(store.consumeOne('per-ip', perMinute, `ip:spoofed-${i}`, 1, now).allowed).toBe(true)
      if (i % 100 === 0) {
        // The key asks every 100 ms and gets exactly its refill (one token per 12 s), never
        // the full allowance a forgotten key would get back.
        const decision = store.consumeOne('per-ip', perMinute, 'ip:victim', 1, now)
        expect(decision.remaining).toBe(0)
        if (decision.allowed) allowedAt.push(now - T0)
      }
      expect(store.size).toBeLessThanOrEqual(1000)
    }
    expect(allowedAt).toEqual([12_000, 24_000, 36_000, 48_000])
    expect(store.size).toBe(1000)
    expect(store.evictions).toBe(50_001 - 1000)
    expect(setTimer).not.toHaveBeenCalled()
    expect(setRepeating).not.toHaveBeenCalled()
  }, 60_000)

  it('reclaims keys that are back to full before evicting any, without counting them', () => {
    // Eight keys: the hand's look-ahead spans the whole table, so "fresh first" is exact.
    const store = memoryStore({ maxKeys: 8 })
    for (let i = 0; i < 8; i++) store.consumeOne('per-ip', perMinute, `ip:old-${i}`, 1, T0)
    // A minute later every bucket is full again: new keys take their places, nothing is lost.
    const later = T0 + 60_000
    for (let i = 0; i < 8; i++) store.consumeOne('per-ip', perMinute, `ip:new-${i}`, 1, later)
    expect([store.size, store.evictions]).toEqual([8, 0])
    for (let i = 8; i < 12; i++) store.consumeOne('per-ip', perMinute, `ip:new-${i}`, 1, later)
    expect([store.size, store.evictions]).toEqual([8, 4])
  })

  it('keeps one table per rule, each bounded on its own', () => {
    const store = memoryStore({ maxKeys: 10 })
    for (let i = 0; i < 50; i++) {
      store.consume([charge(`ip:${i}`, 1, 'a'), charge(`ip:${i}`, 1, 'b')], T0)
    }
    expect(store.size).toBe(20)
    expect(store.evictions).toBe(80)
  })

  it('floors a fractional time, the way a monotonic clock reads', () => {
    const store = memoryStore()
    expect(store.consumeOne('per-ip', perMinute, 'k', 1, T0 + 0.75)).toMatchObject({
      allowed: true,
      remaining: 4,
    })
    const outcome = store.consume([charge('k')], T0 + 0.999)
    expect(outcome.at).toBe(T0)
    expect(outcome.decisions[0]).toMatchObject({ allowed: true, remaining: 3 })
    store.refund([charge('k')], T0 + 0.5, T0 + 0.5)
    expect(store.consumeOne('per-ip', perMinute, 'k', 0, T0)).toMatchObject({ remaining: 4 })
  })

  it('refuses a bad time or cost before creating or writing anything', () => {
    const store = memoryStore()
    const code = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        return (error as { code?: string }).code
      }
      return 'no error'
    }
    // A fractional time is floored (a monotonic clock gives one), not refused.
    for (const now of [-1, Number.NaN, Number.POSITIVE_INFINITY, MAX_TIME_MS + 1]) {
      expect(code(() => store.consumeOne('per-ip', perMinute, 'k', 1, now))).toBe(
        'ERR_RL_INVALID_TIME',
      )
      expect(code(() => store.consume([charge('k')], now))).toBe('ERR_RL_INVALID_TIME')
      expect(code(() => store.refund([charge('k')], T0, now))).toBe('ERR_RL_INVALID_TIME')
    }
    for (const cost of [-1, 0.5, Number.POSITIVE_INFINITY]) {
      expect(code(() => store.consumeOne('per-ip', perMinute, 'k', cost, T0))).toBe(
        'ERR_RL_INVALID_COST',
      )
      expect(code(() => store.consume([charge('k', cost)], T0))).toBe('ERR_RL_INVALID_COST')
    }
    expect(code(() => store.consumeOne('per-ip', perMinute, 'k', 6, T0))).toBe(
      'ERR_RL_COST_EXCEEDS_CAPACITY',
    )
    // The first charge is fine, the second can never pass: the request fails as a whole.
    expect(code(() => store.consume([charge('a'), charge('b', 6, 'other')], T0))).toBe(
      'ERR_RL_COST_EXCEEDS_CAPACITY',
    )
    expect(store.size).toBe(0)
  })

  it('refuses a maxKeys outside 1 … 16,777,215 and a fractional seed', () => {
    for (const maxKeys of [0, -1, 1.5, 16_777_216, Number.NaN]) {
      expect(() => memoryStore({ maxKeys })).toThrow(expect.objectContaining({ field: 'maxKeys' }))
    }
    expect(() => memoryStore({ seed: 0.5 })).toThrow(expect.objectContaining({ field: 'seed' }))
  })

  it('gives back a refunded charge, and creates no entry for a key it does not hold', () => {
    const store = memoryStore()
    const { at } = store.consume([charge('ip:a', 3)], T0)
    store.refund([charge('ip:a', 3)], at, T0)
    expect(store.consumeOne('per-ip', perMinute, 'ip:a', 0, T0).remaining).toBe(5)
    store.refund([charge('ip:unknown', 3)], at, T0)
    store.refund([charge('ip:a', 1, 'unknown-rule')], at, T0)
    expect(store.size).toBe(1)
  })

  it('answers consume and consumeOne alike, synchronously', () => {
    const store = memoryStore({ seed: 1 })
    const other = memoryStore({ seed: 2 })
    for (let i = 0; i < 8; i++) {
      const outcome = store.consume([charge('ip:a', 1)], T0 + i)
      expect(outcome).not.toBeInstanceOf(Promise)
      expect(outcome).toEqual({
        decisions: [other.consumeOne('per-ip', perMinute, 'ip:a', 1, T0 + i)],
        at: T0 + i,
      })
    }
  })

  it('keeps states when a rule comes back as a new but identical algorithm, and drops them when it changes', () => {
    const store = memoryStore()
    store.consumeOne('r', gcra({ rate: 1, periodMs: 60_000, burst: 2 }), 'k', 2, T0)
    const same = gcra({ rate: 1, periodMs: 60_000, burst: 2 })
    expect(store.consumeOne('r', same, 'k', 1, T0).allowed).toBe(false)
    const changed = fixedWindow({ limit: 2, windowMs: 60_000 })
    expect(store.consumeOne('r', changed, 'k', 1, T0).remaining).toBe(1)
    expect(() =>
      store.consume(
        [
          { ...charge('k'), rule: 'r' },
          { ...charge('k'), rule: 'r', algorithm: changed },
        ],
        T0,
      ),
    ).toThrow(expect.objectContaining({ code: 'ERR_RL_INVALID_RULE', rule: 'r' }))
  })

  it('keeps a table per algorithm under one rule id, so two limiters sharing it both limit', () => {
    const store = memoryStore()
    const bucket = tokenBucket({ rate: 1, periodMs: 60_000, burst: 3 })
    const window = fixedWindow({ limit: 2, windowMs: 60_000 })
    const allowed = { bucket: 0, window: 0 }
    // Two limiters, each with its own rule named "per-ip", take turns on the same key.
    for (let i = 0; i < 10; i++) {
      if (store.consumeOne('per-ip', bucket, 'k', 1, T0).allowed) allowed.bucket++
      if (store.consumeOne('per-ip', window, 'k', 1, T0).allowed) allowed.window++
    }
    expect(allowed).toEqual({ bucket: 3, window: 2 })
    expect(store.size).toBe(2)
  })
})

describe('memoryStore sweep, heldUntil and forget', () => {
  const T0 = 1_700_000_000_000

  it('sweep drops exactly the keys whose window has ended, whatever the state form', () => {
    const store = memoryStore({ seed: 7 })
    const packedWindow = fixedWindow({ limit: 5, windowMs: 1_000, anchor: 'first-charge' })
    const wideWindow = fixedWindow({ limit: 2 ** 40, windowMs: 1_000, anchor: 'first-charge' })
    for (let i = 0; i < 40; i++) {
      store.consumeOne('packed', packedWindow, `early-${i}`, 1, T0)
      store.consumeOne('wide', wideWindow, `early-${i}`, 1, T0)
    }
    for (let i = 0; i < 40; i++) {
      store.consumeOne('packed', packedWindow, `late-${i}`, 1, T0 + 500)
      store.consumeOne('wide', wideWindow, `late-${i}`, 1, T0 + 500)
    }
    expect(store.size).toBe(160)
    expect(store.sweep(T0 + 999)).toBe(0)
    expect(store.sweep(T0 + 1_000)).toBe(80)
    expect(store.size).toBe(80)
    for (let i = 0; i < 40; i++) {
      // The later keys keep their counts; the swept ones start again.
      expect(store.consumeOne('packed', packedWindow, `late-${i}`, 0, T0 + 1_000).remaining).toBe(4)
      expect(store.heldUntil('wide', wideWindow, `late-${i}`)).toBe(T0 + 1_500)
      expect(store.heldUntil('wide', wideWindow, `early-${i}`)).toBeUndefined()
    }
    expect(store.sweep(T0 + 1_500)).toBe(80)
    expect(store.size).toBe(0)
  })

  it('sweep keeps an emptied window until its end and drops logs that hold nothing', () => {
    const store = memoryStore({ seed: 7 })
    const window = fixedWindow({ limit: 5, windowMs: 1_000, anchor: 'first-charge' })
    store.consumeOne('r', window, 'k', 1, T0)
    store.refundOne('r', window, 'k', 1, T0, T0 + 10)
    expect(store.heldUntil('r', window, 'k')).toBe(T0 + 1_000)
    expect(store.sweep(T0 + 10)).toBe(0)
    expect(store.sweep(T0 + 1_000)).toBe(1)
    expect(() => store.sweep(-1)).toThrow()
  })

  it('heldUntil is undefined for an unknown rule or key, and forget drops one key', () => {
    const store = memoryStore({ seed: 7 })
    const bucket = tokenBucket({ rate: 1, burst: 2 })
    expect(store.heldUntil('r', bucket, 'a')).toBeUndefined()
    store.consumeOne('r', bucket, 'a', 2, T0)
    store.consumeOne('r', bucket, 'b', 1, T0)
    expect(store.heldUntil('r', bucket, 'a')).toBe(T0 + 2_000)
    expect(store.heldUntil('r', bucket, 'c')).toBeUndefined()
    store.forget('r', bucket, 'a')
    store.forget('r', bucket, 'c')
    store.forget('other', bucket, 'a')
    expect(store.heldUntil('r', bucket, 'a')).toBeUndefined()
    expect(store.consumeOne('r', bucket, 'a', 0, T0).remaining).toBe(2)
    expect(store.consumeOne('r', bucket, 'b', 0, T0).remaining).toBe(1)
    expect(store.size).toBe(1)
  })
})

describe('memoryStore: per-client figures (carryFigures)', () => {
  const bucket = (burst: number) => tokenBucket({ rate: 1, periodMs: 3_600_000, burst })
  const keep = (
    from: Parameters<typeof carryState>[0],
    slots: Parameters<typeof carryState>[1],
    offset: number,
    to: Parameters<typeof carryState>[3],
    now: number,
  ) => carryState(from, slots, offset, to, now, 'keep')

  it('holds a key once, under the figures it was last charged with, and carries it between them', () => {
    const store = memoryStore({ seed: 1 })
    store.carryFigures('per-key', keep)
    const [free, pro] = [bucket(5), bucket(50)]
    store.consumeOne('per-key', free, 'api_key:k', 3, T0)
    expect(store.consumeOne('per-key', pro, 'api_key:k', 1, T0).remaining).toBe(46)
    expect(store.size).toBe(1)
    // Back to the first figures: what was used carries back (debt included under keep).
    expect(store.consumeOne('per-key', free, 'api_key:k', 0, T0).remaining).toBe(1)
    expect(store.size).toBe(1)
    // A refund or a reset given the rule's own figures finds the key where it is.
    store.consumeOne('per-key', pro, 'api_key:k', 1, T0)
    store.refund(
      [{ rule: 'per-key', algorithm: free, key: 'api_key:k', cost: 1, shadow: false }],
      T0,
      T0,
    )
    expect(store.consumeOne('per-key', pro, 'api_key:k', 0, T0).remaining).toBe(46)
    store.forget('per-key', free, 'api_key:k')
    expect(store.size).toBe(0)
  })

  it('keeps up to 64 sets of figures per rule; past that the oldest set’s keys start fresh', () => {
    const store = memoryStore({ seed: 1 })
    store.carryFigures('per-key', keep)
    store.consumeOne('per-key', bucket(2), 'api_key:old', 1, T0)
    for (let burst = 3; burst < 3 + 63; burst++)
      store.consumeOne('per-key', bucket(burst), `api_key:${burst}`, 1, T0)
    expect(store.size).toBe(64)
    store.consumeOne('per-key', bucket(100), 'api_key:new', 1, T0)
    expect(store.size).toBe(64)
    expect(store.consumeOne('per-key', bucket(2), 'api_key:old', 0, T0).remaining).toBe(2)
  })
})
