// fallbackStore outside leasedStore: while the shared store fails, a process first spends the
// leases it holds (charged before the outage), and only what needs the store falls back to its
// share; when the store answers, the local admissions are charged to it through the leases'
// store. Driven time: the limiter's `now` and the leases' manual clock.
import {
  createLimiter,
  fallbackStore,
  fixedWindow,
  RateLimitError,
  type RuleConfig,
} from '@tollgate/core'
import type { Store } from '@tollgate/core/store'
import { manualTime, referenceStore } from '@tollgate/test-utils'
import { describe, expect, it } from 'vitest'
import { leasedStore } from './leased-store.js'

const START = 1_800_000_000_000
const rule = {
  id: 'hot',
  match: { identity: 'api_key' },
  algorithm: 'fixed_window',
  limit: 1000,
  window: '1m',
  onStoreError: 'fallback',
} as const satisfies RuleConfig
const facts = { method: 'GET', path: '/', identities: { api_key: 'tenant' } }

describe('fallbackStore(leasedStore(shared))', () => {
  it('spends held leases first, then the share, and charges the share when the store answers', async () => {
    const time = manualTime(START)
    const inner = referenceStore()
    const state = { down: false }
    const shared: Store = {
      consume: async (charges, now) => {
        if (state.down) throw new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'down')
        return inner.consume(charges, now)
      },
      refund: async (charges, at, now) => inner.refund(charges, at, now),
      timeoutMs: 250,
    }
    const leased = leasedStore(shared, {
      rules: [rule],
      ttlMs: 60_000,
      maxShare: 0.1,
      clock: time.clock,
      timers: time.timers,
    })
    const store = fallbackStore(leased, { instances: 4, logger: false })
    const limiter = createLimiter({ rules: [rule], store, logger: false })
    const decide = (now = START) => limiter.decide(facts, { now })
    // Warm up: the leases grow to 100 units (a tenth of the limit) held in this process.
    for (let i = 0; i < 40; i++) expect((await decide()).allowed).toBe(true)
    const held = leased.stats()
    expect(held.localDecisions).toBeGreaterThan(0)

    state.down = true
    const verdicts = []
    for (let i = 0; i < 400; i++) verdicts.push(await decide())
    const fromLeases = verdicts.filter((v) => v.allowed && v.decisions[0]!.degraded !== true).length
    const fromShare = verdicts.filter((v) => v.allowed && v.decisions[0]!.degraded === true).length
    expect(fromLeases).toBeGreaterThan(0) // what the lease held, charged before the outage
    expect(fromShare).toBe(250) // then the share: 1000 ÷ 4
    expect(verdicts.filter((v) => !v.allowed)).toHaveLength(400 - fromLeases - fromShare)

    state.down = false
    await decide(START + 1000) // the first probe charges the 250
    await decide(START + 2000) // the next returns to the store
    await store.reconciling()
    // Everything admitted is counted in the shared store (leases hold at most 100 more).
    const admitted = 40 + fromLeases + fromShare + 2
    const inspect = {
      rule: 'hot',
      algorithm: fixedWindow({ limit: 1000, windowMs: 60_000 }),
      key: 'api_key:tenant',
      cost: 0,
      shadow: false,
    }
    const used = 1000 - (await inner.consume([inspect], START + 2000)).decisions[0]!.remaining
    expect(used).toBeGreaterThanOrEqual(admitted)
    expect(used).toBeLessThanOrEqual(admitted + 100)
  })
})
