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
import {
  type Algorithm,
  type Charge,
  type Decision,
  MAX_TIME_MS,
  type Store,
} from '@tollgate/core/store'
import { referenceStore } from '@tollgate/test-utils'
import fc from 'fast-check'
import { expect } from 'vitest'

/** Keys that would break a careless key scheme: braces, newlines, unicode, empty, 10 kB. */
export const AWKWARD_KEYS = [
  'ip:203.0.113.7',
  'api_key:k_1',
  '',
  '{',
  '}',
  '{}',
  'a{b}c',
  'user:{tenant}:42',
  'line\nbreak',
  'tab\tand space',
  '🚦 ünïcødé',
  '\uD800',
  '\uDFFF',
  '%7B',
  'x'.repeat(10_000),
  `${'x'.repeat(9_999)}y`,
]

/** Zones for calendar windows: UTC, daylight saving by 1 h and by 30 min, a fixed offset. */
const CALENDAR_ZONES = [undefined, 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata']

/** A fixed window of each calendar unit in `zone`. */
function calendarAlgorithms(limit: number, zone: string | undefined): Algorithm[] {
  return (['day', 'week', 'month', 'year'] as const).map((calendar) =>
    fixedWindow({ limit, calendar, ...(zone === undefined ? {} : { timeZone: zone }) }),
  )
}

const periods = fc.constantFrom(1, 7, 333, 1000, 60_000)

/** Any algorithm, with parameters small enough that traces reach their limits. */
export const algorithmArb: fc.Arbitrary<Algorithm> = fc.oneof(
  fc
    .record({
      rate: fc.integer({ min: 1, max: 20 }),
      periodMs: periods,
      burst: fc.integer({ min: 1, max: 8 }),
    })
    .chain((params) => fc.constantFrom(tokenBucket(params), gcra(params), leakyBucket(params))),
  // Queues: shaped (delay 0), partly at once (delay within the burst), with a wait bound or not.
  fc
    .record({
      rate: fc.integer({ min: 1, max: 20 }),
      periodMs: periods,
      burst: fc.integer({ min: 1, max: 8 }),
      delayShare: fc.integer({ min: 0, max: 8 }),
      maxWaitMs: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
    })
    .map(({ delayShare, maxWaitMs, ...rate }) =>
      leakyQueue({
        ...rate,
        delay: Math.min(delayShare, rate.burst),
        ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
      }),
    ),
  // Rates too fine for GCRA's ticks since the epoch: its two-number state.
  fc
    .record({
      rate: fc.integer({ min: 2048, max: 20_000 }),
      periodMs: fc.constantFrom(1, 1000, 7),
      burst: fc.integer({ min: 1, max: 8 }),
    })
    .map(gcra),
  fc
    .record({ limit: fc.integer({ min: 1, max: 8 }), windowMs: fc.integer({ min: 1, max: 3000 }) })
    .chain((params) =>
      fc.constantFrom(fixedWindow(params), slidingLog(params), slidingWindow(params)),
    ),
  // Sub-window counters, up to 60 a window.
  fc
    .record({
      limit: fc.integer({ min: 1, max: 8 }),
      buckets: fc.constantFrom(2, 3, 6, 60),
      width: fc.integer({ min: 1, max: 200 }),
    })
    .map(({ limit, buckets, width }) =>
      slidingWindow({ limit, windowMs: buckets * width, buckets }),
    ),
  fc
    .record({ limit: fc.integer({ min: 1, max: 8 }), zone: fc.constantFrom(...CALENDAR_ZONES) })
    .chain(({ limit, zone }) => fc.constantFrom(...calendarAlgorithms(limit, zone))),
)

/**
 * Calendar windows on traces that start a few seconds before one of their boundaries (a local
 * midnight, a Monday, the 1st, New Year), so that traces cross it.
 */
export const calendarBoundaryArbs = {
  algorithms: fc
    .record({
      limit: fc.integer({ min: 1, max: 8 }),
      zone: fc.constantFrom(...CALENDAR_ZONES),
      unit: fc.constantFrom('day', 'week', 'month', 'year' as const),
    })
    .map(({ limit, zone, unit }) =>
      fixedWindow({ limit, calendar: unit, ...(zone === undefined ? {} : { timeZone: zone }) }),
    ),
}

type TraceRule = {
  readonly id: string
  readonly algorithm: Algorithm
  readonly shadow: boolean
}

type TraceStep =
  | { readonly kind: 'consume'; readonly dt: number; readonly charges: readonly Charge[] }
  | { readonly kind: 'refund'; readonly dt: number; readonly of: number }

export type Trace = { readonly start: number; readonly steps: readonly TraceStep[] }

const dtArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 400 }) },
  { weight: 1, arbitrary: fc.integer({ min: 400, max: 5000 }) },
)

const YEAR_MS = 365 * 86_400_000

/** Gaps that are now and then clock steps: back a little or a lot, forward up to ten years. */
const steppingDtArb = fc.oneof(
  { weight: 8, arbitrary: dtArb },
  { weight: 1, arbitrary: fc.integer({ min: -5000, max: -1 }) },
  { weight: 1, arbitrary: fc.integer({ min: -10 * YEAR_MS, max: 10 * YEAR_MS }) },
)

const costArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(1) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 8 }) },
)

/**
 * Sliding logs long enough to cross the Redis store's packed maximum (32 entries) both ways,
 * with costs that add dozens of entries at once: the packed and list forms, and the moves
 * between them.
 */
export const longLogArbs = {
  algorithms: fc
    .record({
      limit: fc.integer({ min: 100, max: 400 }),
      windowMs: fc.integer({ min: 500, max: 3000 }),
    })
    .map(slidingLog),
  costs: fc.oneof(
    { weight: 2, arbitrary: fc.constant(1) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 150 }) },
  ),
}

/**
 * Concurrency rules, mostly, beside the other algorithms: traces whose refunds are releases
 * (`expectSameAsReference` with `releases`), so that slots come back once, as the limiter gives
 * them back.
 */
export const concurrencyArbs = {
  algorithms: fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .record({
          limit: fc.integer({ min: 1, max: 8 }),
          retryAfterMs: fc.integer({ min: 1, max: 5000 }),
        })
        .map(concurrency),
    },
    { weight: 1, arbitrary: algorithmArb },
  ),
}

/**
 * A request trace: 1–3 rules (some in shadow mode), each request charging a few of them on keys
 * drawn from `keys`, time never going backwards unless `clockSteps` (then the clock now and then
 * steps back or forward, by up to ten years); now and then a refund of an earlier request.
 */
export function traceArb(
  keys: readonly string[],
  maxSteps = 30,
  {
    algorithms = algorithmArb,
    costs = costArb,
    clockSteps = false,
    nearBoundaries = false,
  }: {
    algorithms?: fc.Arbitrary<Algorithm>
    costs?: fc.Arbitrary<number>
    clockSteps?: boolean
    /** Start a few seconds before a boundary of the first rule's calendar window. */
    nearBoundaries?: boolean
  } = {},
): fc.Arbitrary<Trace> {
  const gapArb = clockSteps ? steppingDtArb : dtArb
  const rulesArb = fc.array(fc.record({ algorithm: algorithms, shadow: fc.boolean() }), {
    minLength: 1,
    maxLength: 3,
  })
  return rulesArb.chain((drawn) => {
    const rules: TraceRule[] = drawn.map((rule, i) => ({
      id: `rule-${i}`,
      ...rule,
      shadow: rule.shadow && i > 0,
    }))
    const chargeArb = fc
      .record({
        rule: fc.integer({ min: 0, max: rules.length - 1 }),
        key: fc.constantFrom(...keys),
        cost: costs,
      })
      .map(({ rule, key, cost }): Charge => {
        const { id, algorithm, shadow } = rules[rule]!
        return { rule: id, algorithm, key, cost: Math.min(cost, algorithm.limit), shadow }
      })
    const stepArb: fc.Arbitrary<TraceStep> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .record({
            dt: gapArb,
            charges: fc.array(chargeArb, { minLength: 1, maxLength: 3 }).map(withinLimits),
          })
          .map((step) => ({ kind: 'consume' as const, ...step })),
      },
      {
        weight: 1,
        arbitrary: fc
          .record({ dt: gapArb, of: fc.nat() })
          .map((step) => ({ kind: 'refund' as const, ...step })),
      },
    )
    const calendar = rules[0]!.algorithm.params
    const boundaryOf =
      nearBoundaries && calendar?.kind === 'window' && calendar.calendar !== undefined
        ? calendar.calendar
        : undefined
    return fc.record({
      start:
        boundaryOf === undefined
          ? fc.oneof(fc.constant(0), fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }))
          : fc
              .record({
                t: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
                before: fc.integer({ min: 0, max: 10_000 }),
              })
              .map(({ t, before }) => boundaryOf.windowAt(t)[1] - before),
      steps: fc.array(stepArb, { minLength: 1, maxLength: maxSteps }),
    })
  })
}

/**
 * Traces whose every request charges all of `count` rules on one key, as a gateway's rule set
 * does: with 8, the most rules one rule-set script decides (its locals are bounded), each rule
 * any algorithm, shadow or not, so that the widest scripts run with every shape of state.
 */
export function wideRequestTraceArb(key: string, count: number): fc.Arbitrary<Trace> {
  const rulesArb = fc.array(fc.record({ algorithm: algorithmArb, shadow: fc.boolean() }), {
    minLength: count,
    maxLength: count,
  })
  return rulesArb.chain((rules) => {
    const stepArb = fc
      .record({
        dt: dtArb,
        costs: fc.array(costArb, { minLength: count, maxLength: count }),
      })
      .map(
        ({ dt, costs }): TraceStep => ({
          kind: 'consume',
          dt,
          charges: rules.map(({ algorithm, shadow }, i) => ({
            rule: `rule-${i}`,
            algorithm,
            key,
            cost: Math.min(costs[i]!, algorithm.limit),
            shadow: shadow && i > 0,
          })),
        }),
      )
    return fc.record({
      start: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
      steps: fc.array(stepArb, { minLength: 1, maxLength: 20 }),
    })
  })
}

/**
 * Lowers costs so that one request's charges on one rule and key sum to at most its limit:
 * stores refuse a request that could never pass.
 */
export function withinLimits(charges: readonly Charge[]): Charge[] {
  return charges.map((charge, i) => {
    let earlier = 0
    for (const other of charges.slice(0, i)) {
      if (other.rule === charge.rule && other.key === charge.key) earlier += other.cost
    }
    return { ...charge, cost: Math.max(0, Math.min(charge.cost, charge.algorithm.limit - earlier)) }
  })
}

/** -0 and 0 are the same decision. */
export function normalise(decisions: readonly Decision[]): Decision[] {
  return decisions.map((d) => ({
    ...d,
    remaining: d.remaining + 0,
    resetAfterMs: d.resetAfterMs + 0,
    retryAfterMs: d.retryAfterMs === undefined ? undefined : d.retryAfterMs + 0,
    ...(d.delayMs === undefined ? {} : { delayMs: d.delayMs + 0 }),
  }))
}

/**
 * Feeds a trace to `store` and to the reference store and expects identical decisions at every
 * step (allowed, remaining, limit, resetAfterMs, retryAfterMs) and the caller's time as `at`.
 */
export async function expectSameAsReference(
  store: Store,
  trace: Trace,
  {
    releases = false,
  }: {
    /**
     * A refund step gives back an admitted request that was not given back yet, once (as the
     * limiter releases slots), rather than any earlier request.
     */
    releases?: boolean
  } = {},
): Promise<void> {
  const reference = referenceStore({ dropFresh: true })
  const consumed: { charges: readonly Charge[]; at: number }[] = []
  let now = trace.start
  for (const [index, step] of trace.steps.entries()) {
    now = Math.min(MAX_TIME_MS, Math.max(0, now + step.dt))
    if (step.kind === 'consume') {
      const expected = await reference.consume(step.charges, now)
      const actual = await store.consume(step.charges, now)
      expect(normalise(actual.decisions), `step ${index} at ${now}`).toEqual(
        normalise(expected.decisions),
      )
      expect(actual.at).toBe(now)
      const admitted = expected.decisions.every((d, i) => d.allowed || step.charges[i]!.shadow)
      // A release gives back what the request took: its allowed charges (as the limiter does).
      const taken = releases
        ? step.charges.filter((_, i) => expected.decisions[i]!.allowed)
        : step.charges
      if (!releases || admitted) consumed.push({ charges: taken, at: now })
    } else if (consumed.length > 0) {
      const earlier = consumed[step.of % consumed.length]!
      if (releases) consumed.splice(step.of % consumed.length, 1)
      reference.refund(earlier.charges, earlier.at, now)
      await store.refund(earlier.charges, earlier.at, now)
    }
  }
}

/** fast-check favours small integers; these traces need the large ones as often. */
const bigOrSmall = (max: number) =>
  fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: max / 2, max }))

/**
 * Algorithms whose integers come close to 2^53 (huge capacities, odd periods), where a Lua
 * number printed with 14 digits or a division rounded the wrong way would show.
 */
export const extremeAlgorithmArb: fc.Arbitrary<Algorithm> = fc.oneof(
  fc
    .record({
      rate: fc.integer({ min: 1, max: 1000 }),
      periodMs: fc.constantFrom(999_983, 86_400_000, 2 ** 31 - 1),
      burst: bigOrSmall(2 ** 20),
    })
    .chain((params) => fc.constantFrom(tokenBucket(params), leakyBucket(params))),
  fc
    .record({ rate: fc.integer({ min: 1, max: 2047 }), burst: fc.integer({ min: 1, max: 1000 }) })
    .map((params) => gcra({ ...params, periodMs: 1 })),
  // Every rate the token bucket takes, GCRA takes too: up to the largest a field carries.
  fc
    .record({
      rate: fc.oneof(
        fc.integer({ min: 2048, max: 10_000 }),
        fc.integer({ min: 1, max: 999_999_999_999_999 }),
      ),
      periodMs: fc.constantFrom(1, 3, 1000, 999_983, 2 ** 31 - 1),
      burst: bigOrSmall(2 ** 40),
    })
    .filter(({ rate, periodMs, burst }) => {
      try {
        tokenBucket({ rate, periodMs, burst })
        return true
      } catch {
        return false
      }
    })
    .map(gcra),
  fc
    .record({
      limit: bigOrSmall(2 ** 20),
      windowMs: bigOrSmall(2 ** 30),
    })
    .chain((params) => fc.constantFrom(fixedWindow(params), slidingWindow(params))),
)

/** One rule of `algorithm` on one key, with large steps in time and costs near the limit. */
export function extremeTraceArb(): fc.Arbitrary<Trace> {
  return fc
    .record({
      algorithm: extremeAlgorithmArb,
      start: fc.integer({ min: 2 ** 41, max: 2 ** 42 - 2 ** 36 }),
      steps: fc.array(
        fc.record({
          dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 ** 33 })),
          permille: fc.integer({ min: 0, max: 1000 }),
        }),
        { minLength: 1, maxLength: 25 },
      ),
    })
    .map(({ algorithm, start, steps }) => ({
      start,
      steps: steps.map(({ dt, permille }) => ({
        kind: 'consume' as const,
        dt,
        charges: [
          {
            rule: 'big',
            algorithm,
            key: 'k',
            cost: Math.round((permille * algorithm.limit) / 1000),
            shadow: false,
          },
        ],
      })),
    }))
}

/** One of each algorithm, as a rule in the spec's terms: 10 per second or 10 per window. */
/**
 * Each algorithm with room for 20 (`before`) and the same with room for 5 (`after`): what a
 * rule becomes when its limit is lowered while keys still hold state.
 */
export const LOWERED: ReadonlyArray<readonly [before: Algorithm, after: Algorithm]> = [
  [tokenBucket({ rate: 10, burst: 20 }), tokenBucket({ rate: 10, burst: 5 })],
  [
    gcra({ rate: 100, periodMs: 60_000, burst: 20 }),
    gcra({ rate: 100, periodMs: 60_000, burst: 5 }),
  ],
  [leakyBucket({ rate: 10, burst: 20 }), leakyBucket({ rate: 10, burst: 5 })],
  [fixedWindow({ limit: 20, windowMs: 60_000 }), fixedWindow({ limit: 5, windowMs: 60_000 })],
  [slidingLog({ limit: 20, windowMs: 60_000 }), slidingLog({ limit: 5, windowMs: 60_000 })],
  [slidingWindow({ limit: 20, windowMs: 60_000 }), slidingWindow({ limit: 5, windowMs: 60_000 })],
]

export const ONE_OF_EACH: readonly Algorithm[] = [
  tokenBucket({ rate: 10, burst: 20 }),
  gcra({ rate: 100, periodMs: 60_000, burst: 20 }),
  leakyBucket({ rate: 10, burst: 20 }),
  fixedWindow({ limit: 20, windowMs: 60_000 }),
  slidingLog({ limit: 20, windowMs: 60_000 }),
  slidingWindow({ limit: 20, windowMs: 60_000 }),
]

/**
 * ONE_OF_EACH and the window algorithms' other shapes, each with a limit of 20: a calendar
 * month in a time zone, and sub-window counters.
 */
export const EVERY_SHAPE: readonly Algorithm[] = [
  ...ONE_OF_EACH,
  fixedWindow({ limit: 20, calendar: 'month', timeZone: 'Europe/Paris' }),
  slidingWindow({ limit: 20, windowMs: 60_000, buckets: 60 }),
]
