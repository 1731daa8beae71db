// A clock that steps, by any amount, either way: the harm is bounded by the rule's own reset
// span, and no step hands out more than the rule allows.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  MAX_TIME_MS,
  slidingLog,
  slidingWindow,
  step,
  tokenBucket,
} from './index.js'
import { ceilDiv } from './integer.js'

/**
 * The longest a key waits on a steady clock: a rate rule's fill time (burst ÷ rate), one window
 * (a calendar window's longest), or two for the two-counter sliding window (its count weighs
 * until the end of the next window).
 */
function resetSpanMs(algorithm: Algorithm): number {
  const params = algorithm.params!
  if (params.kind === 'rate') return ceilDiv(params.capacity, params.unitsPerMs)
  if (params.kind === 'concurrency') return 0
  // A calendar window's policy length is its unit's mean: a 25-hour day is longer, by under 10%.
  const window = params.calendar === undefined ? params.windowMs : Math.ceil(params.windowMs * 1.1)
  const twoCounters = algorithm.name === 'sliding_window' && params.buckets === undefined
  return twoCounters ? 2 * window : window
}

const YEAR_MS = 365 * 86_400_000

const rateArb = fc.record({
  rate: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 999_999_999 })),
  periodMs: fc.constantFrom(1, 7, 1000, 60_000, 999_983),
  burst: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 1_000_000 })),
})
const windowArb = fc.record({
  limit: fc.integer({ min: 1, max: 30 }),
  windowMs: fc.constantFrom(1, 100, 1000, 60_000, 86_400_000),
})
const algorithmArb: fc.Arbitrary<Algorithm> = fc.oneof(
  rateArb.chain((p) => fc.constantFrom(tokenBucket(p), gcra(p), leakyBucket(p))),
  windowArb.chain((p) => fc.constantFrom(...windowAlgorithms(p))),
)

/** Every window algorithm, sub-window counters and calendar windows included. */
function windowAlgorithms(p: { limit: number; windowMs: number }): Algorithm[] {
  const all = [fixedWindow(p), slidingLog(p), slidingWindow(p)]
  if (p.windowMs % 10 === 0) all.push(slidingWindow({ ...p, buckets: 10 }))
  if (p.windowMs === 86_400_000) {
    all.push(fixedWindow({ limit: p.limit, calendar: 'day', timeZone: 'America/New_York' }))
  }
  return all
}

/** Steps of every size: within a reset span, a few spans, and up to ten years, either way. */
const stepArb = (span: number) =>
  fc
    .oneof(
      fc.integer({ min: 1, max: 3 * span + 2 }),
      fc.integer({ min: 1, max: 10 * YEAR_MS }),
      fc.constantFrom(3 * 3_600_000, 10 * YEAR_MS),
    )
    .chain((size) => fc.constantFrom(size, -size))

const warmUpArb = fc.array(
  fc.record({ gap: fc.integer({ min: 0, max: 2000 }), cost: fc.integer({ min: 0, max: 40 }) }),
  { maxLength: 40 },
)

const START = 1_800_000_000_000

/** Runs arrivals from START on a fresh key; returns the state and the last time. */
function warmUp(algorithm: Algorithm, arrivals: readonly { gap: number; cost: number }[]) {
  let state = step(algorithm, undefined, 0, START).state
  let now = START
  for (const { gap, cost } of arrivals) {
    now += gap
    state = step(algorithm, state, Math.min(cost, algorithm.limit), now).state
  }
  return { state, now }
}

const caseArb = algorithmArb.chain((algorithm) =>
  fc.record({
    algorithm: fc.constant(algorithm),
    arrivals: warmUpArb,
    step: stepArb(resetSpanMs(algorithm)),
    cost: fc.integer({ min: 1, max: algorithm.limit }),
  }),
)

describe('a clock step of any size', () => {
  it('costs a key at most one reset span: every wait is within two, and the key is whole again after them', () => {
    fc.assert(
      fc.property(caseArb, ({ algorithm, arrivals, step: jump, cost }) => {
        const span = resetSpanMs(algorithm)
        const before = warmUp(algorithm, arrivals)
        const at = Math.min(MAX_TIME_MS - 2 * span - 1, Math.max(0, before.now + jump))
        const first = step(algorithm, before.state, cost, at)
        expect(first.decision.resetAfterMs).toBeLessThanOrEqual(2 * span + 1)
        if (!first.decision.allowed) {
          expect(first.decision.retryAfterMs).toBeLessThanOrEqual(2 * span + 1)
        }
        const whole = step(algorithm, first.state, algorithm.limit, at + 2 * span + 1)
        expect(whole.decision.allowed).toBe(true)
      }),
      { numRuns: 1500 },
    )
  })

  it('never leaves more after a step back than there was before it', () => {
    fc.assert(
      fc.property(caseArb, ({ algorithm, arrivals, step: jump }) => {
        const before = warmUp(algorithm, arrivals)
        const at = Math.max(0, before.now - Math.abs(jump))
        const left = step(algorithm, before.state, 0, before.now).decision.remaining
        const after = step(algorithm, before.state, 0, at)
        expect(after.decision.remaining).toBeLessThanOrEqual(left)
        // And nothing appears from a second look either.
        expect(step(algorithm, after.state, 0, at).decision.remaining).toBe(
          after.decision.remaining,
        )
      }),
      { numRuns: 1500 },
    )
  })

  it('gives a rate rule no more than burst + rate × the time the clock moved forward', () => {
    const jumps = fc.array(
      fc.record({
        jump: fc.oneof(
          fc.integer({ min: 0, max: 400 }),
          fc.integer({ min: -5000, max: 3000 }),
          fc.integer({ min: -10 * YEAR_MS, max: 10 * YEAR_MS }),
        ),
        cost: fc.integer({ min: 0, max: 5 }),
      }),
      { minLength: 1, maxLength: 200 },
    )
    fc.assert(
      fc.property(jumps, (trace) => {
        const params = { rate: 10, burst: 5 }
        for (const algorithm of [tokenBucket(params), gcra(params), leakyBucket(params)]) {
          let state = step(algorithm, undefined, 0, START).state
          let now = START
          let forward = 0
          let spent = 0
          for (const { jump, cost } of trace) {
            const next = Math.min(MAX_TIME_MS, Math.max(0, now + jump))
            forward += Math.max(0, next - now)
            now = next
            const result = step(algorithm, state, cost, now)
            state = result.state
            if (result.decision.allowed) spent += cost
            // 5 at once, then 10 per second of forward movement (elapsed clamped to 0 on a step back)
            expect(spent * 1000).toBeLessThanOrEqual(5 * 1000 + 10 * forward)
            expect(state.every(Number.isSafeInteger)).toBe(true)
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('a clock that steps back three hours', () => {
  // The reproduction: a drained token bucket (10 per second, burst 20) waited the whole step.
  it.each([
    tokenBucket({ rate: 10, burst: 20 }),
    gcra({ rate: 10, burst: 20 }),
    leakyBucket({ rate: 10, burst: 20 }),
  ])('leaves a drained $name waiting for one token, not three hours', (algorithm) => {
    const drained = step(algorithm, undefined, 20, START)
    const after = step(algorithm, drained.state, 1, START - 3 * 3_600_000)
    expect(after.decision).toMatchObject({ allowed: false, remaining: 0 })
    expect(after.decision.retryAfterMs).toBeLessThanOrEqual(100)
    // The move is kept: 100 ms later (on the stepped clock) the token is there.
    const later = step(algorithm, after.state, 1, START - 3 * 3_600_000 + 100)
    expect(later.decision.allowed).toBe(true)
  })

  it('holds a small step at the stored time: clocks a few ms apart never refill twice', () => {
    const bucket = tokenBucket({ rate: 10, burst: 20 })
    const drained = step(bucket, undefined, 20, START)
    const behind = step(bucket, drained.state, 1, START - 50)
    expect(behind.decision).toMatchObject({ allowed: false, retryAfterMs: 150 })
    expect(behind.state).toEqual(drained.state)
  })
})

/**
 * Steps of every size either way: a few ms, a few windows, up to ten years, and steps that land
 * on the last ms of a window (`edge`: that many windows away), where a step back would do most
 * harm if it let the next ms open a fresh window.
 */
const windowTraceArb = (windowMs: number) =>
  fc.array(
    fc.record({
      jump: fc.oneof(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: -3 * windowMs, max: 3 * windowMs }),
        fc.integer({ min: -10 * YEAR_MS, max: 10 * YEAR_MS }),
      ),
      edge: fc.option(fc.integer({ min: -4, max: 0 }), { freq: 3 }),
      cost: fc.integer({ min: 0, max: 6 }),
    }),
    { minLength: 1, maxLength: 200 },
  )

/** Where a trace's step lands. */
function landing(now: number, jump: number, edge: number | null, windowMs: number): number {
  const at = edge === null ? now + jump : now - (now % windowMs) + (edge + 1) * windowMs - 1
  return Math.min(MAX_TIME_MS, Math.max(0, at))
}

/**
 * The most a window rule hands out while its clock moves forward by `forward` ms in all: a fixed
 * window (and the sliding window counter, which admits less) a full limit in each window that
 * span touches; the sliding log a limit per window, plus one.
 */
function windowAllowance(algorithm: Algorithm, forward: number): number {
  const { limit, windowMs } = algorithm.params as { limit: number; windowMs: number }
  const windows =
    algorithm.name === 'sliding_log'
      ? Math.floor(forward / windowMs) + 1
      : Math.ceil(forward / windowMs) + 1
  return limit * windows
}

describe('a window rule on a clock that steps again and again', () => {
  it('hands out no more than it would while the clock only moved forward, and every wait stays within two reset spans', () => {
    const caseArb = fc
      .record({
        limit: fc.integer({ min: 1, max: 6 }),
        windowMs: fc.constantFrom(1, 3, 10, 100, 1000),
      })
      .chain((params) =>
        fc.record({
          algorithm: fc.constantFrom(...windowAlgorithms(params)),
          trace: windowTraceArb(params.windowMs),
        }),
      )
    fc.assert(
      fc.property(caseArb, ({ algorithm, trace }) => {
        const span = resetSpanMs(algorithm)
        let state = step(algorithm, undefined, 0, START).state
        let now = START
        let forward = 0
        let spent = 0
        const windowMs = (algorithm.params as { windowMs: number }).windowMs
        for (const { jump, edge, cost } of trace) {
          const next = landing(now, jump, edge, windowMs)
          forward += Math.max(0, next - now)
          now = next
          const result = step(algorithm, state, Math.min(cost, algorithm.limit), now)
          state = result.state
          if (result.decision.allowed) spent += Math.min(cost, algorithm.limit)
          expect(spent).toBeLessThanOrEqual(windowAllowance(algorithm, forward))
          expect(result.decision.resetAfterMs).toBeLessThanOrEqual(2 * span + 1)
          expect(result.decision.retryAfterMs ?? 0).toBeLessThanOrEqual(2 * span + 1)
          expect(state.every(Number.isSafeInteger)).toBe(true)
        }
      }),
      { numRuns: 2000 },
    )
  })
})

/**
 * A key whose last call was a charge admitted at `at`: the warm-up, then a charge of 1 at the
 * first ms it passes (retryAfterMs is exact), so the state's own time is that charge's.
 */
function chargedAt(algorithm: Algorithm, arrivals: readonly { gap: number; cost: number }[]) {
  const before = warmUp(algorithm, arrivals)
  const probe = step(algorithm, before.state, 1, before.now)
  if (probe.decision.allowed) return { state: probe.state, at: before.now }
  const at = before.now + probe.decision.retryAfterMs!
  const charged = step(algorithm, probe.state, 1, at)
  expect(charged.decision.allowed).toBe(true)
  return { state: charged.state, at }
}

/** Every algorithm of `algorithmArb` but calendar windows, which keep their boundaries. */
const withoutCalendarArb = algorithmArb.filter(
  (algorithm) => (algorithm.params as { calendar?: unknown }).calendar === undefined,
)

/**
 * How far behind a key's own time a clock is held: its reset span; for a calendar window, the
 * previous window (a step back past it moves the count), which a shorter day or month than the
 * longest makes less than the span: 0.9 × the unit's mean is shorter than every window.
 */
function holdSpanMs(algorithm: Algorithm): number {
  const params = algorithm.params as { calendar?: unknown; windowMs: number }
  if (params.calendar !== undefined) return Math.floor(params.windowMs * 0.9)
  return resetSpanMs(algorithm)
}

describe('a clock behind the key, by up to its reset span (two gateways sharing a store)', () => {
  it('makes no room: after its call, the key has no more left than without it', () => {
    const behindArb = algorithmArb.chain((algorithm) =>
      fc.record({
        algorithm: fc.constant(algorithm),
        arrivals: warmUpArb,
        behind: fc.integer({ min: 1, max: holdSpanMs(algorithm) }),
        cost: fc.integer({ min: 1, max: algorithm.limit }),
        later: fc.integer({ min: 0, max: 3 }),
      }),
    )
    fc.assert(
      fc.property(behindArb, ({ algorithm, arrivals, behind, cost, later }) => {
        const { state, at } = chargedAt(algorithm, arrivals)
        const behindClock = step(algorithm, state, cost, at - behind)
        const withIt = step(algorithm, behindClock.state, 0, at + later).decision.remaining
        const without = step(algorithm, state, 0, at + later).decision.remaining
        expect(withIt).toBeLessThanOrEqual(without)
      }),
      { numRuns: 3000 },
    )
  })

  // The reproduction (issue 50, item 2): 20 per second, clocks 1,001 to 1,999 ms apart; the
  // counts moved one window back weighed nothing by the time the clock ahead read them again.
  it.each([1000, 1001, 1500, 1999, 2000])(
    'holds a sliding window counter %i ms behind: 20 per second stay 20',
    (behind) => {
      const counter = slidingWindow({ limit: 20, windowMs: 1000 })
      const a = step(counter, undefined, 20, START)
      expect(a.decision.allowed).toBe(true)
      const b = step(counter, a.state, 1, START - behind)
      expect(b.decision.allowed).toBe(false)
      expect(b.state).toEqual(a.state)
      expect(step(counter, b.state, 1, START + 1).decision.allowed).toBe(false)
    },
  )
})

describe('a clock that stepped back further than the reset span', () => {
  it('leaves the key waiting at most one reset span, whole after it, and retryAfterMs exact', () => {
    const farArb = withoutCalendarArb.chain((algorithm) => {
      const span = resetSpanMs(algorithm)
      return fc.record({
        algorithm: fc.constant(algorithm),
        arrivals: warmUpArb,
        back: fc.oneof(
          fc.integer({ min: 3 * span + 2, max: 6 * span + 10 }),
          fc.integer({ min: 3 * span + 2, max: Math.max(3 * span + 2, 10 * YEAR_MS) }),
          fc.constant(3 * 3_600_000 + 3 * span + 2),
        ),
        cost: fc.integer({ min: 1, max: algorithm.limit }),
      })
    })
    fc.assert(
      fc.property(farArb, ({ algorithm, arrivals, back, cost }) => {
        const span = resetSpanMs(algorithm)
        const { state, at } = chargedAt(algorithm, arrivals)
        const t = Math.max(0, at - back)
        fc.pre(at - t > 3 * span + 1)
        const first = step(algorithm, state, cost, t)
        expect(first.decision.resetAfterMs).toBeLessThanOrEqual(span)
        if (!first.decision.allowed) {
          const retry = first.decision.retryAfterMs!
          expect(retry).toBeLessThanOrEqual(span)
          // Exact on the stepped clock: the same request passes then, and not 1 ms earlier.
          expect(step(algorithm, first.state, cost, t + retry).decision.allowed).toBe(true)
          if (retry > 0) {
            expect(step(algorithm, first.state, cost, t + retry - 1).decision.allowed).toBe(false)
          }
        }
        expect(step(algorithm, first.state, algorithm.limit, t + span).decision.allowed).toBe(true)
      }),
      { numRuns: 3000 },
    )
  })

  // The reproduction (issue 50, item 3): a drained 1-second window, the clock 3 hours back.
  it.each([0, 1, 500, 999])(
    'leaves a drained fixed window (drained %i ms into it) waiting one window at most',
    (into) => {
      const window = fixedWindow({ limit: 5, windowMs: 1000 })
      const drained = step(window, undefined, 5, START + into)
      const back = START + into - 3 * 3_600_000
      const after = step(window, drained.state, 1, back)
      expect(after.decision).toMatchObject({ allowed: false, retryAfterMs: 1000 })
      expect(step(window, after.state, 1, back + 999).decision.allowed).toBe(false)
      expect(step(window, after.state, 5, back + 1000).decision.allowed).toBe(true)
    },
  )
})
