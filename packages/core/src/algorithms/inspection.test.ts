// A cost-0 call inspects: it takes nothing and writes nothing, whatever the clock reads, so a
// trace decides the same with or without inspections between its charges.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  MAX_TIME_MS,
  slidingLog,
  slidingWindow,
  step,
  tokenBucket,
} from './index.js'

const YEAR_MS = 365 * 86_400_000
const START = 1_800_000_000_000

const algorithmArb: fc.Arbitrary<Algorithm> = fc.oneof(
  fc
    .record({
      rate: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 2048, max: 999_999 })),
      periodMs: fc.constantFrom(1, 7, 1000, 60_000),
      burst: fc.integer({ min: 1, max: 30 }),
    })
    .chain((p) => fc.constantFrom(tokenBucket(p), gcra(p), leakyBucket(p))),
  fc
    .record({
      rate: fc.integer({ min: 1, max: 50 }),
      periodMs: fc.constantFrom(1000, 60_000),
      burst: fc.integer({ min: 1, max: 30 }),
    })
    .map((p) => leakyQueue(p)),
  fc
    .record({
      limit: fc.integer({ min: 1, max: 30 }),
      windowMs: fc.constantFrom(10, 1000, 60_000, 86_400_000),
    })
    .chain((p) =>
      fc.constantFrom(
        fixedWindow(p),
        slidingLog(p),
        slidingWindow(p),
        slidingWindow({ ...p, buckets: 10 }),
        fixedWindow({ limit: p.limit, calendar: 'day', timeZone: 'Europe/Paris' }),
      ),
    ),
)

/** Jumps of every size either way: a few ms, a few windows, up to ten years. */
const jumpArb = fc.oneof(
  fc.integer({ min: 0, max: 50 }),
  fc.integer({ min: -3000, max: 3000 }),
  fc.integer({ min: -200_000_000, max: 200_000_000 }),
  fc.integer({ min: -10 * YEAR_MS, max: 10 * YEAR_MS }),
)

const traceArb = algorithmArb.chain((algorithm) =>
  fc.record({
    algorithm: fc.constant(algorithm),
    trace: fc.array(
      fc.record({
        jump: jumpArb,
        cost: fc.integer({ min: 1, max: algorithm.limit }),
        // Inspections made before this charge, each at its own jump from the charge's time.
        inspections: fc.array(jumpArb, { maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 40 },
    ),
  }),
)

const clamp = (t: number) => Math.min(MAX_TIME_MS, Math.max(0, t))

describe('a cost-0 inspection', () => {
  it('leaves the state exactly as it was, at any time, a clock that stepped back included', () => {
    fc.assert(
      fc.property(traceArb, ({ algorithm, trace }) => {
        let state = step(algorithm, undefined, 0, START).state
        let now = START
        for (const { jump, cost, inspections } of trace) {
          now = clamp(now + jump)
          for (const inspection of inspections) {
            const looked = step(algorithm, state, 0, clamp(now + inspection))
            expect(looked.decision.allowed).toBe(true)
            expect(looked.state).toEqual(state)
          }
          state = step(algorithm, state, cost, now).state
        }
      }),
      { numRuns: 1500 },
    )
  })

  it('changes no later decision: a trace decides the same with inspections as without', () => {
    fc.assert(
      fc.property(traceArb, ({ algorithm, trace }) => {
        let plain = step(algorithm, undefined, 0, START).state
        let inspected = plain
        let now = START
        for (const { jump, cost, inspections } of trace) {
          now = clamp(now + jump)
          for (const inspection of inspections) {
            // Through the store's own path: decide in place, as a store does.
            const slots = [...inspected]
            algorithm.decide(slots, 0, 0, clamp(now + inspection), true)
            inspected = slots
          }
          const a = step(algorithm, plain, cost, now)
          const b = step(algorithm, inspected, cost, now)
          expect(b.decision).toEqual(a.decision)
          plain = a.state
          inspected = b.state
        }
      }),
      { numRuns: 1500 },
    )
  })

  // Before: a cost-0 call refilled a token bucket to its time and moved a stepped-back state, a
  // new starting point from which the next charge refilled.
  it('of a drained token bucket, 3 hours back, lends no refill to the next charge', () => {
    const bucket = tokenBucket({ rate: 10, burst: 20 })
    const drained = step(bucket, undefined, 20, START).state
    const back = START - 3 * 3_600_000
    const slots = [...drained]
    bucket.decide(slots, 0, 0, back, true)
    expect(slots).toEqual(drained)
    expect(step(bucket, slots, 1, back + 99).decision.allowed).toBe(false)
  })
})
