import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import {
  concurrency,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from './index.js'
import type { Algorithm } from './types.js'

type Factory = (params: never) => Algorithm

/** Every factory, by the name its errors give, with parameters it takes: each one it reads. */
const FACTORIES: ReadonlyArray<readonly [string, Factory, readonly Record<string, unknown>[]]> = [
  ['tokenBucket', tokenBucket, [{ rate: 10, periodMs: 1000, burst: 5 }]],
  ['gcra', gcra, [{ rate: 10, periodMs: 1000, burst: 5 }]],
  ['leakyBucket', leakyBucket, [{ rate: 10, periodMs: 1000, burst: 5 }]],
  ['leakyQueue', leakyQueue, [{ rate: 10, periodMs: 1000, burst: 5, delay: 2, maxWaitMs: 500 }]],
  [
    'fixedWindow',
    fixedWindow,
    [
      { limit: 5, windowMs: 1000 },
      { limit: 5, calendar: 'day', timeZone: 'UTC' },
    ],
  ],
  ['slidingLog', slidingLog, [{ limit: 5, windowMs: 1000 }]],
  ['slidingWindow', slidingWindow, [{ limit: 5, windowMs: 1000, buckets: 10 }]],
  [
    'concurrency',
    concurrency,
    [{ limit: 5, retryAfterMs: 100, queue: 2, maxWaitMs: 500, queueOrder: 'lifo' }],
  ],
]

/** Every parameter name some factory reads: one factory's may be another's unknown. */
const ALL_NAMES = [...new Set(FACTORIES.flatMap(([, , sets]) => sets.flatMap(Object.keys)))]

function refusal(build: () => unknown): { code: string; field?: string; message: string } {
  try {
    build()
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    return { code: error.code, field: error.field, message: error.message }
  }
  throw new Error('the parameters were accepted')
}

describe('algorithm factories refuse parameters they do not read', () => {
  it('tokenBucket({ rate: 10, brust: 5 }) names the factory, the parameter and the one meant', () => {
    const error = refusal(() => tokenBucket({ rate: 10, burst: 5, brust: 5 } as never))
    expect(error).toMatchObject({ code: 'ERR_RL_INVALID_RULE', field: 'brust' })
    expect(error.message).toBe(
      '[tollgate] tokenBucket(): unknown parameter "brust": did you mean "burst"?',
    )
  })

  it.each(FACTORIES)('%s builds from every parameter it reads', (_, factory, sets) => {
    for (const params of sets) expect(() => factory(params as never)).not.toThrow()
  })

  it('every factory refuses any other name, and counts an undefined one as not given', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FACTORIES),
        fc.oneof(fc.constantFrom(...ALL_NAMES), fc.string({ minLength: 1, maxLength: 12 })),
        ([name, factory, sets], extra) => {
          const params = sets[0]!
          fc.pre(!sets.some((set) => Object.hasOwn(set, extra)))
          // `calendar` and `windowMs` together are a window of another kind, refused apart.
          fc.pre(!(name === 'fixedWindow' && extra === 'calendar'))
          fc.pre(!(name === 'fixedWindow' && extra === 'timeZone'))
          const error = refusal(() => factory({ ...params, [extra]: 1 } as never))
          expect(error.code).toBe('ERR_RL_INVALID_RULE')
          expect(error.field).toBe(extra)
          expect(error.message).toContain(`${name}(): unknown parameter ${JSON.stringify(extra)}`)
          expect(() => factory({ ...params, [extra]: undefined } as never)).not.toThrow()
        },
      ),
      { numRuns: 400 },
    )
  })

  it('every factory suggests the parameter meant for a single-letter typo of it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...FACTORIES), fc.nat(), fc.nat(), ([, factory, sets], i, j) => {
        const params = sets[0]!
        const names = Object.keys(params)
        const meant = names[i % names.length]!
        const at = j % meant.length
        const typo = `${meant.slice(0, at)}${meant[at] === 'x' ? 'y' : 'x'}${meant.slice(at + 1)}`
        const { [meant]: value, ...rest } = params
        const error = refusal(() => factory({ ...rest, [typo]: value } as never))
        expect(error.message).toContain(`unknown parameter "${typo}": did you mean "`)
      }),
      { numRuns: 200 },
    )
  })
})
