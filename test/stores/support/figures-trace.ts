// Traces in which each charge comes with one of several figures of one rule (as the limiter's
// `figures` option gives a key its client's), for the memory store (a table per set of figures,
// carrying a key between them) and a store that carries in its own code (Redis: from the
// figures stored beside each state).
import { type CarryStrategy, carryState, memoryStore } from '@tollgate/core'
import type { Algorithm, Charge, FiguresCarry, Store } from '@tollgate/core/store'
import fc from 'fast-check'
import { expect } from 'vitest'
import { FAMILIES, type Family } from './carry-trace.js'
import { normalise } from './trace.js'

const KEYS = ['api_key:a', 'api_key:b', 'api_key:{c}']

type FiguresStep =
  | {
      readonly kind: 'consume'
      readonly dt: number
      readonly key: number
      /** Which of the trace's figures the request comes with. */
      readonly figures: number
      readonly cost: number
    }
  /** Gives back the charge just made (as the limiter's refunds do, under its figures). */
  | { readonly kind: 'refund'; readonly dt: number }
  /** An operator's look at a key under the rule's own figures. */
  | { readonly kind: 'peek'; readonly dt: number; readonly key: number }

export type FiguresTrace = {
  readonly start: number
  /** The rule's own figures first, then clients' others. */
  readonly figures: readonly Algorithm[]
  readonly steps: readonly FiguresStep[]
}

export function figuresTraceArb(family: Family): fc.Arbitrary<FiguresTrace> {
  const dt = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 }), fc.integer({ max: 5000 }))
  return fc.record({
    start: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    figures: fc.array(FAMILIES[family], { minLength: 2, maxLength: 3 }),
    steps: fc.array(
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            kind: fc.constant('consume' as const),
            dt: dt.map(Math.abs),
            key: fc.nat({ max: KEYS.length - 1 }),
            figures: fc.nat({ max: 2 }),
            cost: fc.nat({ max: 8 }),
          }),
        },
        {
          weight: 1,
          arbitrary: fc.record({ kind: fc.constant('refund' as const), dt: dt.map(Math.abs) }),
        },
        {
          weight: 1,
          arbitrary: fc.record({
            kind: fc.constant('peek' as const),
            dt: dt.map(Math.abs),
            key: fc.nat({ max: KEYS.length - 1 }),
          }),
        },
      ),
      { minLength: 1, maxLength: 30 },
    ),
  })
}

/** The carry the limiter hands a store for a rule whose `onChange` is `strategy`. */
const carryBy =
  (strategy: CarryStrategy): FiguresCarry =>
  (from, slots, offset, to, now) =>
    carryState(from, slots, offset, to, now, strategy)

/**
 * Feeds the trace to the memory store and to `store`, both told the rule takes per-client figures
 * (a rule without a version: Redis keeps its keys under version 0), and expects the same decisions at each step.
 */
export async function expectSameFiguresAsMemory(
  store: Store,
  strategy: CarryStrategy,
  { start, figures, steps }: FiguresTrace,
): Promise<void> {
  const memory = memoryStore()
  const own = figures[0]!
  memory.carryFigures('r', carryBy(strategy))
  store.carryFigures!('r', carryBy(strategy), own, strategy)
  let now = start
  let last: Charge | undefined
  let lastAt = now
  for (const [index, step] of steps.entries()) {
    now += step.dt
    const label = `step ${index} (${step.kind}) at ${now}`
    if (step.kind === 'consume') {
      const algorithm = figures[step.figures % figures.length]!
      const charge: Charge = {
        rule: 'r',
        algorithm,
        key: KEYS[step.key]!,
        cost: Math.min(step.cost, algorithm.limit),
        shadow: false,
      }
      const expected = memory.consume([charge], now)
      const actual = await store.consume([charge], now)
      expect(normalise(actual.decisions), label).toEqual(normalise(expected.decisions))
      last = charge
      lastAt = now
      continue
    }
    if (step.kind === 'refund') {
      if (last === undefined) continue
      memory.refund([last], lastAt, now)
      await store.refund([last], lastAt, now)
      const look = { ...last, cost: 0 }
      const expected = memory.consume([look], now)
      const actual = await store.consume([look], now)
      expect(normalise(actual.decisions), `${label}: after it`).toEqual(
        normalise(expected.decisions),
      )
      last = undefined
      continue
    }
    // An operator's look under the rule's own figures finds the key whichever figures hold it,
    // and on Redis carries it into the rule's own (as the look at a changed rule does): as a
    // cost-0 charge under them in the memory store.
    const ref = { rule: 'r', algorithm: own, key: KEYS[step.key]! }
    const expected = memory.consume([{ ...ref, cost: 0, shadow: false }], now)
    const actual = await store.peek!(ref, undefined, now)
    expect(normalise([actual.decision]), label).toEqual(normalise(expected.decisions))
    last = undefined
  }
}
