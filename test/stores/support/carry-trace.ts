// Traces of charges with changes of a rule's figures in between, for the memory store (which
// carries a key through each change, RuleChange.carry) and the Redis store (whose scripts carry a
// versioned state from the figures it was written under).
import {
  type CarryStrategy,
  carryState,
  fixedWindow,
  gcra,
  leakyBucket,
  memoryStore,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import type { Algorithm, Charge, Store } from '@tollgate/core/store'
import fc from 'fast-check'
import { expect } from 'vitest'
import { normalise } from './trace.js'

export const STRATEGIES: readonly CarryStrategy[] = ['keep', 'proportional', 'reset', 'additive']

const rateArb = fc
  .record({
    rate: fc.integer({ min: 1, max: 20 }),
    periodMs: fc.constantFrom(1, 7, 333, 1000, 60_000),
    burst: fc.integer({ min: 1, max: 8 }),
  })
  .chain((params) => fc.constantFrom(tokenBucket(params), gcra(params), leakyBucket(params)))

/** Rates too fine for GCRA's ticks since the epoch: its two-number state. */
const fineRateArb = fc
  .record({
    rate: fc.integer({ min: 2048, max: 20_000 }),
    periodMs: fc.constantFrom(1, 1000, 7),
    burst: fc.integer({ min: 1, max: 8 }),
  })
  .chain((params) => fc.constantFrom(tokenBucket(params), gcra(params), leakyBucket(params)))

/** The families whose states carry into each other's figures, each a source of algorithms. */
export const FAMILIES = {
  rate: fc.oneof(rateArb, fineRateArb),
  fixed_window: fc
    .record({ limit: fc.integer({ min: 1, max: 8 }), windowMs: fc.integer({ min: 1, max: 3000 }) })
    .map(fixedWindow),
  sliding_window: fc.oneof(
    fc
      .record({
        limit: fc.integer({ min: 1, max: 8 }),
        windowMs: fc.integer({ min: 1, max: 3000 }),
      })
      .map(slidingWindow),
    fc
      .record({
        limit: fc.integer({ min: 1, max: 8 }),
        buckets: fc.constantFrom(2, 3, 6),
        width: fc.integer({ min: 1, max: 200 }),
      })
      .map(({ limit, buckets, width }) =>
        slidingWindow({ limit, windowMs: buckets * width, buckets }),
      ),
  ),
} as const

export type Family = keyof typeof FAMILIES

/** How a key is first touched after a change: charged at cost 0, or looked at by an operator. */
type Touch = 'inspect' | 'peek'

type CarryStep =
  | { readonly kind: 'consume'; readonly dt: number; readonly key: number; readonly cost: number }
  /** Gives back a charge made since the last change (`of`: which, modulo their number). */
  | { readonly kind: 'refund'; readonly dt: number; readonly of: number }
  | {
      readonly kind: 'update'
      readonly dt: number
      readonly to: Algorithm
      readonly strategy: CarryStrategy
      /** How each key is touched right after (see expectSameCarryAsMemory). */
      readonly touches: readonly Touch[]
    }

export type CarryTrace = {
  readonly start: number
  readonly first: Algorithm
  /** Whether the rule penalises denials: its charges then go through `consumePenalised`. */
  readonly penalised: boolean
  readonly steps: readonly CarryStep[]
}

const PENALTY = { blockMs: 700, factor: 2, maxBlockMs: 5000, forgetAfterMs: 9000 }

const KEYS = ['ip:a', 'ip:b', 'ip:{c}']

/** Charges and changes of one family's rule, at most `updates` changes, with `strategy` or any. */
export function carryTraceArb(
  family: Family,
  strategy?: CarryStrategy,
  updates = 3,
): fc.Arbitrary<CarryTrace> {
  const algorithms = FAMILIES[family]
  const dt = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 }), fc.integer({ max: 5000 }))
  const consume = fc.record({
    kind: fc.constant('consume' as const),
    dt: dt.map(Math.abs),
    key: fc.nat({ max: KEYS.length - 1 }),
    cost: fc.nat({ max: 8 }),
  })
  const refund = fc.record({
    kind: fc.constant('refund' as const),
    dt: dt.map(Math.abs),
    of: fc.nat(),
  })
  const update = fc.record({
    kind: fc.constant('update' as const),
    dt: dt.map(Math.abs),
    to: algorithms,
    strategy: strategy === undefined ? fc.constantFrom(...STRATEGIES) : fc.constant(strategy),
    touches: fc.array(fc.constantFrom<Touch>('inspect', 'peek'), {
      minLength: KEYS.length,
      maxLength: KEYS.length,
    }),
  })
  const step = fc.oneof(
    { weight: 5, arbitrary: consume },
    { weight: 1, arbitrary: refund },
    { weight: 1, arbitrary: update },
  )
  return fc.record({
    start: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    first: algorithms,
    penalised: fc.boolean(),
    steps: fc
      .array(step, {
        minLength: 1,
        maxLength: 24,
      })
      .filter((steps) => steps.filter((step) => step.kind === 'update').length <= updates),
  })
}

/** The algorithm as a rule declaring `version` and `onChange` compiles it. */
function versioned(algorithm: Algorithm, version: number, onChange: CarryStrategy): Algorithm {
  return { ...algorithm, versioned: { version, onChange } }
}

/**
 * Feeds the trace to the memory store (told each change as `limiter.update` tells it) and to
 * `store` (charged with the versioned algorithm), and expects the same decisions at every step:
 * charges (penalised or not, with the same offences), refunds, and operators' looks. After each
 * change every key is touched in both (charged at cost 0, or looked at), so that each is carried
 * across one change at a time: a key untouched across several is carried through each in turn
 * by the memory store, at once from its own figures to the newest by Redis (see the docs).
 */
export async function expectSameCarryAsMemory(store: Store, trace: CarryTrace): Promise<void> {
  const memory = memoryStore()
  const penalty = trace.penalised ? PENALTY : undefined
  /** Charges made since the last change: what a refund step gives back. */
  let made: { key: number; cost: number; at: number }[] = []
  let plain = trace.first
  let version = 0
  let shared = versioned(plain, version, 'keep')
  let now = trace.start
  const charge = (algorithm: Algorithm, key: number, cost: number): Charge => ({
    rule: 'r',
    algorithm,
    key: KEYS[key]!,
    cost: Math.min(cost, algorithm.limit),
    shadow: false,
    ...(penalty === undefined ? {} : { penalty }),
  })
  const both = async (key: number, cost: number, label: string) => {
    if (penalty === undefined) {
      const expected = memory.consume([charge(plain, key, cost)], now)
      const actual = await store.consume([charge(shared, key, cost)], now)
      expect(normalise(actual.decisions), label).toEqual(normalise(expected.decisions))
      return
    }
    const expected = memory.consumePenalised([charge(plain, key, cost)], now)
    const actual = await store.consumePenalised!([charge(shared, key, cost)], now)
    expect(normalise(actual.decisions), label).toEqual(normalise(expected.decisions))
    expect(actual.offences, label).toEqual(expected.offences)
  }
  const peek = async (key: number, label: string) => {
    const ref = (algorithm: Algorithm) => ({ rule: 'r', algorithm, key: KEYS[key]! })
    const expected = memory.peek(ref(plain), penalty, now)
    const actual = await store.peek!(ref(shared), penalty, now)
    expect(normalise([actual.decision]), label).toEqual(normalise([expected.decision]))
  }
  for (const [index, step] of trace.steps.entries()) {
    now += step.dt
    if (step.kind === 'consume') {
      await both(step.key, step.cost, `step ${index} at ${now}`)
      made.push({ key: step.key, cost: Math.min(step.cost, plain.limit), at: now })
      continue
    }
    if (step.kind === 'refund') {
      if (made.length === 0) continue
      const { key, cost, at } = made[step.of % made.length]!
      memory.refund([charge(plain, key, cost)], at, now)
      await store.refund([charge(shared, key, cost)], at, now)
      await both(key, 0, `step ${index}: after a refund at ${now}`)
      continue
    }
    const { to, strategy } = step
    const from = plain
    // The same figures: no change (limiter.update leaves such a rule as it is).
    if (to.name === from.name && JSON.stringify(to.params) === JSON.stringify(from.params)) continue
    version++
    if (strategy === 'reset') memory.updateRules([], ['r'], now)
    else {
      const carry = (slots: ArrayLike<number>, offset: number, at: number) =>
        carryState(from, slots as number[], offset, to, at, strategy)
      memory.updateRules([{ rule: 'r', from, to, carry }], [], now)
    }
    const next = versioned(to, version, strategy)
    await store.updateRules?.(
      [{ rule: 'r', from: shared, to: next, carry: () => undefined }],
      [],
      now,
    )
    plain = to
    shared = next
    made = []
    for (let key = 0; key < KEYS.length; key++) {
      const label = `step ${index} (update to ${to.name}, ${strategy}): key ${key}`
      if (step.touches[key] === 'peek') await peek(key, label)
      else await both(key, 0, label)
    }
  }
}

/** Charges under one figures, then changes the key meets none of, then charges again. */
export type SkippedChanges = {
  readonly start: number
  readonly first: Algorithm
  readonly before: readonly { readonly dt: number; readonly cost: number }[]
  readonly changes: readonly { readonly to: Algorithm; readonly strategy: CarryStrategy }[]
  readonly after: readonly { readonly dt: number; readonly cost: number }[]
}

export function skippedChangesArb(family: Family): fc.Arbitrary<SkippedChanges> {
  const algorithms = FAMILIES[family]
  const charges = fc.array(
    fc.record({ dt: fc.integer({ min: 0, max: 400 }), cost: fc.nat({ max: 8 }) }),
    { minLength: 1, maxLength: 8 },
  )
  return fc.record({
    start: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    first: algorithms,
    before: charges,
    changes: fc.array(fc.record({ to: algorithms, strategy: fc.constantFrom(...STRATEGIES) }), {
      minLength: 2,
      maxLength: 3,
    }),
    after: charges,
  })
}

/**
 * A key that meets none of several changes is carried once on Redis, from the figures it was
 * written under to the newest, by the newest rule's `onChange`: as a memory store told only that
 * one change decides.
 */
export async function expectCarriedOnceFromItsFigures(
  store: Store,
  { start, first, before, changes, after }: SkippedChanges,
): Promise<void> {
  const memory = memoryStore()
  const last = changes.at(-1)!
  let now = start
  const charge = (algorithm: Algorithm, cost: number): Charge => ({
    rule: 'r',
    algorithm,
    key: 'ip:a',
    cost: Math.min(cost, algorithm.limit),
    shadow: false,
  })
  for (const { dt, cost } of before) {
    now += dt
    const expected = memory.consume([charge(first, cost)], now)
    const actual = await store.consume([charge(versioned(first, 0, 'keep'), cost)], now)
    expect(normalise(actual.decisions)).toEqual(normalise(expected.decisions))
  }
  const same =
    last.to.name === first.name && JSON.stringify(last.to.params) === JSON.stringify(first.params)
  if (!same) {
    if (last.strategy === 'reset') memory.updateRules([], ['r'], now)
    else {
      const carry = (slots: ArrayLike<number>, offset: number, at: number) =>
        carryState(first, slots as number[], offset, last.to, at, last.strategy)
      memory.updateRules([{ rule: 'r', from: first, to: last.to, carry }], [], now)
    }
  }
  const newest = versioned(last.to, changes.length, last.strategy)
  for (const [index, { dt, cost }] of after.entries()) {
    now += dt
    const expected = memory.consume([charge(last.to, cost)], now)
    const actual = await store.consume([charge(newest, cost)], now)
    expect(normalise(actual.decisions), `after the changes, charge ${index}`).toEqual(
      normalise(expected.decisions),
    )
  }
}
