// A clock that returns garbage or throws is a store failure on every adapter: each rule's
// onStoreError decides (200 fail-open, 503 fail-closed), a warning is logged once, never a 500.
// A monotonic clock, whose readings are fractional, decides as usual.
import type { Clock, RuleConfig } from '@tollgate/express'
import { manualClock } from '@tollgate/test-utils'
import { describe, expect, it } from 'vitest'
import { TARGETS } from './targets.js'

const rule = (onStoreError: 'open' | 'closed'): RuleConfig => ({
  id: `per-ip-${onStoreError}`,
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 5,
  window: '1m',
  onStoreError,
})

const BROKEN: readonly (readonly [string, Clock['now']])[] = [
  ['NaN', () => Number.NaN],
  ['a negative number', () => -5],
  ['a string', () => '1767225600000' as unknown as number],
  [
    'a throw',
    () => {
      throw new Error('clock unavailable')
    },
  ],
]

async function statuses(target: (typeof TARGETS)[number], rules: RuleConfig[], now: Clock['now']) {
  const warnings: string[] = []
  const appErrors: unknown[] = []
  const client = await target.start({
    rules,
    options: { clock: { now }, logger: { warn: (line) => warnings.push(line) } },
    clock: manualClock(0),
    skip: () => false,
    refund: undefined,
    onShadowDenied: () => undefined,
    onAppError: (error) => appErrors.push(error),
  })
  const seen: number[] = []
  try {
    for (let i = 0; i < 3; i++) {
      seen.push((await client.send({ method: 'GET', path: '/', headers: {} })).status)
    }
  } finally {
    await client.close()
  }
  return { seen, warnings, appErrors }
}

describe.each(TARGETS)('$name', (target) => {
  it.each(BROKEN)(
    'a clock returning %s lets fail-open rules through, once warned',
    async (_n, now) => {
      const { seen, warnings, appErrors } = await statuses(target, [rule('open')], now)
      expect(seen).toEqual([200, 200, 200])
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/^\[tollgate\] WARN_CLOCK_FAILED: /)
      expect(appErrors).toEqual([])
    },
  )

  it.each(BROKEN)('a clock returning %s makes fail-closed rules answer 503', async (_n, now) => {
    const { seen, warnings, appErrors } = await statuses(target, [rule('closed')], now)
    expect(seen).toEqual([503, 503, 503])
    expect(warnings).toHaveLength(1)
    expect(appErrors).toEqual([])
  })

  it('decides on a monotonic clock, performance.timeOrigin + performance.now()', async () => {
    const { seen, warnings } = await statuses(
      target,
      // A bucket, not a window: real time never crosses a boundary mid-test.
      [
        {
          id: 'per-ip',
          match: { identity: 'ip' },
          algorithm: 'token_bucket',
          rate: 1,
          period: '1h',
          burst: 2,
        },
      ],
      () => performance.timeOrigin + performance.now(),
    )
    expect(seen).toEqual([200, 200, 429])
    expect(warnings).toEqual([])
  })
})
