// What the Redis store's updateRules accepts: changes it can carry, each refused otherwise
// naming the rule and field (no server: it checks and writes nothing).
import { concurrency, fixedWindow, slidingWindow, tokenBucket } from '@tollgate/core'
import type { Algorithm } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import { checkRuleChanges } from './rule-changes.js'

const at = (algorithm: Algorithm, version?: number): Algorithm =>
  version === undefined ? algorithm : { ...algorithm, versioned: { version, onChange: undefined } }

const change = (from: Algorithm, to: Algorithm) => [
  { rule: 'api', from, to, carry: () => undefined },
]

async function refusal(from: Algorithm, to: Algorithm, identity = false) {
  const error = await checkRuleChanges(change(from, to), identity).catch((e: unknown) => e)
  return error === undefined ? undefined : { ...(error as object), message: String(error) }
}

describe('the Redis store’s updateRules', () => {
  it('accepts a change of figures whose version rises', async () => {
    const from = at(tokenBucket({ rate: 10, burst: 20 }), 1)
    expect(await refusal(from, at(tokenBucket({ rate: 10, burst: 40 }), 2))).toBeUndefined()
    expect(await refusal(from, at(fixedWindow({ limit: 5, windowMs: 1000 }), 3))).toBeUndefined()
  })

  it('refuses one whose version does not rise, or that has none, naming the field', async () => {
    const from = tokenBucket({ rate: 10, burst: 20 })
    const to = tokenBucket({ rate: 10, burst: 40 })
    for (const [a, b] of [
      [at(from, 2), at(to, 2)],
      [at(from, 2), at(to, 1)],
      [from, at(to, 1)],
      [at(from, 1), to],
    ] as const) {
      expect(await refusal(a, b)).toMatchObject({ rule: 'api', field: 'version' })
    }
  })

  it('lets a concurrency limit change without a version: its leases carry as they are', async () => {
    expect(await refusal(concurrency({ limit: 2 }), concurrency({ limit: 5 }))).toBeUndefined()
  })

  it('refuses what the scripts do not carry: calendar windows, and in the identity layout a state that fits only without its version', async () => {
    const day = (limit: number) => at(fixedWindow({ limit, calendar: 'day' }), limit)
    expect(await refusal(day(1), day(2))).toMatchObject({
      field: 'algorithm',
      message: expect.stringContaining('calendar window'),
    })
    const fine = (limit: number, buckets: number) =>
      at(slidingWindow({ limit, windowMs: buckets * 1000, buckets }), limit)
    expect(await refusal(fine(1, 26), fine(2, 26), true)).toMatchObject({
      field: 'algorithm',
      message: expect.stringContaining('26 sub-windows in the identity layout'),
    })
    expect(await refusal(fine(1, 26), fine(2, 26), false)).toBeUndefined()
    expect(await refusal(fine(1, 24), fine(2, 24), true)).toBeUndefined()
    expect(await refusal(fine(1, 40), fine(2, 40), true)).toBeUndefined()
  })
})
