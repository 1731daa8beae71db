/*
 * The store contract's optional penalty and operator methods (`consumePenalised`, `peek`,
 * `reset`, `block`, `unblock`): what every store that has them promises. A store without one
 * skips its tests, as a store without `settle` skips settling.
 */
import type { Charge, Penalty, Store } from '@tollgate/core/store'
import { expect, it } from 'vitest'
import { normalise, ONE_OF_EACH } from './trace.js'

/** A minute's block, tripled per offence up to ten minutes, forgotten an hour after a block. */
const PENALTY: Penalty = {
  blockMs: 60_000,
  factor: 3,
  maxBlockMs: 600_000,
  forgetAfterMs: 3_600_000,
}
const FIXED = ONE_OF_EACH[3]! // fixed window, 20 per minute
const penalised = (cost: number, key = 'ip:203.0.113.7'): Charge => ({
  rule: 'login',
  algorithm: FIXED,
  key,
  cost,
  shadow: false,
  penalty: PENALTY,
})
const ref = (key = 'ip:203.0.113.7') => ({ rule: 'login', algorithm: FIXED, key })

/** How many keys a store holds, for the stores that say (the memory store's `size`). */
const sizeOf = (store: Store) => (store as { size?: number }).size

export function describePenaltyContract(fresh: () => Store): void {
  it('records an offence in the call that denies, blocks for block × factor^(n−1) up to the cap, and forgets', async (context) => {
    const store = fresh()
    if (typeof store.consumePenalised !== 'function') return context.skip()
    const call = async (charge: Charge, now: number) => {
      const outcome = await store.consumePenalised!([charge], now)
      return [outcome.decisions[0]!.allowed, outcome.offences[0]]
    }
    expect(await call(penalised(20), 0)).toEqual([true, undefined])
    expect(await call(penalised(1), 1)).toEqual([false, { count: 1, blockedUntil: 60_001 }])
    // Blocked: nothing is charged, whatever the window holds.
    expect(await call(penalised(1), 60_000)).toEqual([true, { count: 1, blockedUntil: 60_001 }])
    const look = await store.consumePenalised!([{ ...penalised(0), key: 'ip:203.0.113.7' }], 60_000)
    expect(normalise(look.decisions)[0]!.remaining).toBe(20)
    // Once the block is over, the next denial is a second offence: 3 minutes, then the cap.
    await call(penalised(20), 60_001)
    expect(await call(penalised(1), 60_002)).toEqual([false, { count: 2, blockedUntil: 240_002 }])
    await call(penalised(20), 240_002)
    expect(await call(penalised(1), 240_003)).toEqual([false, { count: 3, blockedUntil: 780_003 }])
    await call(penalised(20), 780_003)
    expect(await call(penalised(1), 780_004)).toEqual([
      false,
      { count: 4, blockedUntil: 1_380_004 },
    ])
    // The state expired long ago; the offences are kept until an hour after the block.
    expect(await call(penalised(0), 1_380_004 + 3_599_999)).toEqual([
      true,
      { count: 4, blockedUntil: 1_380_004 },
    ])
    expect(await call(penalised(0), 1_380_004 + 3_600_000)).toEqual([true, undefined])
  })

  it('decides a penalised request with its other charges as one unit', async (context) => {
    const store = fresh()
    if (typeof store.consumePenalised !== 'function') return context.skip()
    const other: Charge = {
      rule: 'global',
      algorithm: ONE_OF_EACH[0]!,
      key: 'k',
      cost: 1,
      shadow: false,
    }
    await store.consumePenalised([penalised(20)], 0)
    const denied = await store.consumePenalised([other, penalised(1)], 0)
    expect(denied.decisions.map((d) => d.allowed)).toEqual([true, false])
    expect(denied.offences).toEqual([undefined, { count: 1, blockedUntil: 60_000 }])
    // Denied and then blocked: the other rule was never charged.
    await store.consumePenalised([other, penalised(1)], 30_000)
    const [global] = normalise((await store.consume([{ ...other, cost: 0 }], 30_000)).decisions)
    expect(global!.remaining).toBe(20)
  })

  it('peeks without writing: a key never seen is not created', async (context) => {
    const store = fresh()
    if (typeof store.peek !== 'function') return context.skip()
    const before = sizeOf(store)
    const status = await store.peek(ref('never-seen'), PENALTY, 5000)
    expect([
      status.decision.allowed,
      status.decision.remaining,
      status.offences,
      status.at,
    ]).toEqual([true, 20, undefined, 5000])
    expect(sizeOf(store)).toBe(before)
    await store.consume([{ ...penalised(7), penalty: undefined }], 5000)
    const seen = await store.peek(ref(), undefined, 5000)
    expect(normalise([seen.decision])[0]!.remaining).toBe(13)
  })

  it('resets a key: its state and its offences', async (context) => {
    const store = fresh()
    if (typeof store.reset !== 'function' || store.consumePenalised === undefined)
      return context.skip()
    await store.consumePenalised([penalised(20)], 0)
    await store.consumePenalised([penalised(1)], 0)
    await store.reset(ref(), 0)
    const after = await store.consumePenalised([penalised(1)], 1)
    expect([normalise(after.decisions)[0]!.remaining, after.offences[0]]).toEqual([19, undefined])
  })

  it('blocks and unblocks a key as an operator asks, its count kept', async (context) => {
    const store = fresh()
    if (typeof store.block !== 'function' || store.consumePenalised === undefined)
      return context.skip()
    await store.block(ref(), PENALTY, 90_000, 0)
    const blocked = await store.consumePenalised([penalised(1)], 10)
    expect(blocked.offences[0]).toEqual({ count: 0, blockedUntil: 90_000 })
    await store.unblock!(ref(), 20)
    const free = await store.consumePenalised([penalised(1)], 30)
    expect([free.decisions[0]!.allowed, free.offences[0]]).toEqual([true, undefined])
  })
}
