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

export type CarryStep =
  | { readonly kind: 'consume'; readonly dt: number; readonly key: number; readonly cost: number }
  | {
      readonly kind: 'update'
      readonly dt: number
      readonly to: Algorithm
      readonly strategy: CarryStrategy
    }

export type CarryTrace = {
  readonly start: number
  readonly first: Algorithm
  readonly steps: readonly CarryStep[]
}

export const KEYS = ['ip:a', 'ip:b', 'ip:{c}']

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
  const update = fc.record({
    kind: fc.constant('update' as const),
    dt: dt.map(Math.abs),
    to: algorithms,
    strategy: strategy === undefined ? fc.constantFrom(...STRATEGIES) : fc.constant(strategy),
  })
  return fc.record({
    start: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    first: algorithms,
    steps: fc
      .array(fc.oneof({ weight: 5, arbitrary: consume }, { weight: 1, arbitrary: update }), {
        minLength: 1,
        maxLength: 24,
      })
      .filter((steps) => steps.filter((step) => step.kind === 'update').length <= updates),
  })
}

/** The algorithm as a rule declaring `version` and `onChange` compiles it. */
export function versioned(algorithm: Algorithm, version: number, onChange: CarryStrategy) {
  return { ...algorithm, versioned: { version, onChange } }
}

/**
 * Feeds the trace to the memory store (told each change as `limiter.update` tells it) and to
 * `store` (charged with the versioned algorithm), and expects the same decisions at every step.
 * After each change every key is looked at (cost 0) in both, so that each is carried across one
 * change at a time: a key untouched across several is carried through each in turn by the
 * memory store, at once from its own figures to the newest by Redis (see the docs).
 */
export async function expectSameCarryAsMemory(store: Store, trace: CarryTrace): Promise<void> {
  const memory = memoryStore()
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
  })
  const both = async (key: number, cost: number, label: string) => {
    const expected = memory.consume([charge(plain, key, cost)], now)
    const actual = await store.consume([charge(shared, key, cost)], now)
    expect(normalise(actual.decisions), label).toEqual(normalise(expected.decisions))
  }
  for (const [index, step] of trace.steps.entries()) {
    now += step.dt
    if (step.kind === 'consume') {
      await both(step.key, step.cost, `step ${index} at ${now}`)
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
    await store.updateRules?.([{ rule: 'r', from: shared, to: next, carry: () => undefined }], [], now)
    plain = to
    shared = next
    for (let key = 0; key < KEYS.length; key++) {
      await both(key, 0, `step ${index} (update to ${to.name}, ${strategy}): key ${key}`)
    }
  }
}
