import {
  concurrency,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import type { Algorithm } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import { recipeOf } from './algorithm-recipe.js'
import { algorithmBuilder } from './rebuild-algorithm.js'

const EVERY_BUILT_IN: readonly Algorithm[] = [
  tokenBucket({ rate: 100, periodMs: 60_000, burst: 20 }),
  gcra({ rate: 7, periodMs: 333, burst: 3 }),
  gcra({ rate: 20_000, periodMs: 7, burst: 8 }),
  leakyBucket({ rate: 10, burst: 20 }),
  leakyQueue({ rate: 10, periodMs: 60_000, burst: 20 }),
  leakyQueue({ rate: 3, periodMs: 1000, burst: 8, delay: 2, maxWaitMs: 1500 }),
  fixedWindow({ limit: 20, windowMs: 60_000 }),
  fixedWindow({ limit: 20, windowMs: 60_000, anchor: 'first-charge' }),
  fixedWindow({ limit: 20, calendar: 'month', timeZone: 'Europe/Paris' }),
  slidingLog({ limit: 20, windowMs: 60_000 }),
  slidingWindow({ limit: 20, windowMs: 60_000 }),
  slidingWindow({ limit: 20, windowMs: 60_000, buckets: 60 }),
]

/** What decides: the name, the figures, and the scaled integers (a calendar by its unit and zone). */
function figures(algorithm: Algorithm) {
  const { name, limit, stateSize, policy, params } = algorithm
  const calendar = params?.kind === 'window' ? params.calendar : undefined
  return {
    name,
    limit,
    stateSize,
    policy,
    params: { ...params, calendar: calendar && [calendar.unit, calendar.timeZone] },
  }
}

describe('algorithm recipes', () => {
  it('rebuild every built-in counting rule with the same figures after a trip through JSON', () => {
    const build = algorithmBuilder()
    for (const algorithm of EVERY_BUILT_IN) {
      const text = JSON.stringify(recipeOf(algorithm, 'r'))
      const rebuilt = build(JSON.parse(text), text)
      expect(figures(rebuilt), text).toEqual(figures(algorithm))
    }
  })

  it('refuse a concurrency rule, naming the rule and why', () => {
    expect(() => recipeOf(concurrency({ limit: 4 }), 'reports')).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_RULE',
        rule: 'reports',
        field: 'algorithm',
        message: expect.stringContaining('never be given back'),
      }),
    )
  })

  it('refuse an algorithm of the app’s own', () => {
    const own: Algorithm = { ...tokenBucket({ rate: 1, burst: 1 }), params: undefined }
    expect(() => recipeOf(own, 'mine')).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_RULE', rule: 'mine' }),
    )
  })
})
