/*
 * The store contract's optional rule-change method (`updateRules`): a store that has it carries
 * a changed rule's keys into the new figures. Here by `keep` on a fixed window whose limit is
 * raised: the units used stay used. The rule declares a version before and after (a store that
 * keeps figures beside each state, Redis, carries by it; the memory store by the change's pure
 * `carry`). A store without it skips the test, as a store without `settle` skips settling.
 */
import { fixedWindow } from '@tollgate/core'
import type { Algorithm, Charge, RuleChange, Store } from '@tollgate/core/store'
import { expect, it } from 'vitest'
import { normalise } from './trace.js'

const WINDOW_MS = 60_000
const versioned = (limit: number, version: number): Algorithm => ({
  ...fixedWindow({ limit, windowMs: WINDOW_MS }),
  versioned: { version, onChange: 'keep' },
})
const charge = (algorithm: Algorithm, cost: number, key: string): Charge => ({
  rule: 'carried',
  algorithm,
  key,
  cost,
  shadow: false,
})

export function describeCarryContract(fresh: () => Store): void {
  it('carries a changed rule’s keys into its new figures: the units used stay used', async (context) => {
    const store = fresh()
    if (typeof store.updateRules !== 'function') return context.skip()
    const before = versioned(10, 1)
    const after = versioned(20, 2)
    const left = async (algorithm: Algorithm, key: string, now: number) =>
      normalise((await store.consume([charge(algorithm, 0, key)], now)).decisions)[0]!.remaining
    await store.consume([charge(before, 4, 'ip:203.0.113.7')], 1000)
    await store.consume([charge(before, 10, 'ip:198.51.100.1')], 1000)
    // A fixed window's state is [window start, count]: `keep` leaves both as they are.
    const change: RuleChange = {
      rule: 'carried',
      from: before,
      to: after,
      carry: (slots, offset) => [slots[offset]!, slots[offset + 1]!],
    }
    await store.updateRules([change], [], 2000)
    expect(await left(after, 'ip:203.0.113.7', 2000)).toBe(16)
    // A key that had used all 10 of the old limit has the 10 the change added.
    const full = await store.consume([charge(after, 10, 'ip:198.51.100.1')], 2000)
    expect(normalise(full.decisions)[0]).toMatchObject({ allowed: true, remaining: 0 })
    // The window still ends where it did: the next one starts fresh under the new figures.
    expect(await left(after, 'ip:203.0.113.7', WINDOW_MS)).toBe(20)
  })
}
