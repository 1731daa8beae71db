import { describe, expect, it } from 'vitest'
import { memoryStore } from '../store/memory-store.js'
import { fixedWindow } from './fixed-window.js'

describe('fixedWindow with anchor: first-charge', () => {
  const windowMs = 60_000

  it('opens a key’s window at its first charge, the whole window ahead of it', () => {
    const store = memoryStore()
    const rule = fixedWindow({ limit: 2, windowMs, anchor: 'first-charge' })
    const t0 = 1_767_225_612_345
    expect(store.consumeOne('r', rule, 'k', 1, t0)).toMatchObject({
      allowed: true,
      remaining: 1,
      resetAfterMs: windowMs,
    })
    expect(store.consumeOne('r', rule, 'k', 1, t0 + 10)).toMatchObject({
      remaining: 0,
      resetAfterMs: windowMs - 10,
    })
    expect(store.consumeOne('r', rule, 'k', 1, t0 + 20)).toMatchObject({
      allowed: false,
      retryAfterMs: windowMs - 20,
    })
    // The window ends a whole window after the first charge, not on an epoch boundary.
    expect(store.consumeOne('r', rule, 'k', 1, t0 + windowMs)).toMatchObject({
      allowed: true,
      remaining: 1,
      resetAfterMs: windowMs,
    })
  })

  it('keeps the window of a key whose charges were all refunded', () => {
    const store = memoryStore()
    const rule = fixedWindow({ limit: 5, windowMs, anchor: 'first-charge' })
    store.consumeOne('r', rule, 'k', 1, 1000)
    store.refundOne('r', rule, 'k', 1, 1000, 2000)
    expect(store.consumeOne('r', rule, 'k', 1, 3000)).toMatchObject({
      remaining: 4,
      resetAfterMs: windowMs - 2000,
    })
  })

  it('leaves epoch windows the default, and refuses other anchors or a calendar anchor', () => {
    expect(fixedWindow({ limit: 1, windowMs }).params).not.toHaveProperty('anchor')
    expect(fixedWindow({ limit: 1, windowMs, anchor: 'epoch' }).params).not.toHaveProperty('anchor')
    expect(() => fixedWindow({ limit: 1, windowMs, anchor: 'first' as 'epoch' })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_RULE', field: 'anchor' }),
    )
    expect(() =>
      fixedWindow({ limit: 1, calendar: 'day', anchor: 'first-charge' } as never),
    ).toThrow(expect.objectContaining({ field: 'anchor' }))
  })
})
