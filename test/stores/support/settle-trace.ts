// Random traces of reservations, settlements, cancellations and time, run through the memory
// store and another store (Redis) with injected time: the settle differential.
import { type MemoryStore, memoryStore } from '@tollgate/core'
import {
  type Algorithm,
  type Charge,
  MAX_TIME_MS,
  reservable,
  type Settlement,
  type Store,
} from '@tollgate/core/store'
import fc from 'fast-check'
import { expect } from 'vitest'
import { algorithmArb, normalise } from './trace.js'

/** Every algorithm of the traces that settles (not the leaky queue), as a rule that settles. */
export const settlingArb = algorithmArb
  .filter((algorithm) => typeof algorithm.settle === 'function')
  .map(reservable)

/** What a settlement's actual cost is, against the estimate charged. */
const ACTUALS = ['lower', 'equal', 'higher', 'zero', 'above capacity'] as const

type Step =
  | {
      readonly kind: 'reserve'
      readonly dt: number
      readonly keys: readonly number[]
      readonly costs: readonly number[]
    }
  | {
      readonly kind: 'settle'
      readonly dt: number
      readonly of: number
      readonly actuals: readonly (typeof ACTUALS)[number][]
      readonly draws: readonly number[]
    }
  | { readonly kind: 'cancel'; readonly dt: number; readonly of: number }

type SettleTrace = {
  readonly rules: readonly Algorithm[]
  readonly start: number
  readonly steps: readonly Step[]
}

/** Two identities: on a Redis Cluster, requests whose rules key on both span two slots. */
const KEYS = ['ip:203.0.113.7', 'api_key:k_1']

const dtArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 400 }) },
  { weight: 2, arbitrary: fc.integer({ min: 400, max: 5000 }) },
  // Past a window, so that settlements land after their window rolled over.
  { weight: 1, arbitrary: fc.integer({ min: 5000, max: 70_000 }) },
)

/**
 * 1–3 rules that settle, each request reserving on every one of them (a key each, of two), then
 * settling some earlier reservation (lower, equal, higher, 0, or above the rule's capacity, per
 * rule), cancelling one, or letting time pass. Estimates are ≥ 1: a reservation always writes.
 */
export function settleTraceArb(
  algorithms: fc.Arbitrary<Algorithm>,
  {
    costs = fc.integer({ min: 1, max: 8 }),
    nearBoundaries = false,
  }: {
    costs?: fc.Arbitrary<number>
    /** Start a few seconds before a boundary of the first rule's calendar window. */
    nearBoundaries?: boolean
  } = {},
): fc.Arbitrary<SettleTrace> {
  return fc.array(algorithms, { minLength: 1, maxLength: 3 }).chain((rules) => {
    const count = rules.length
    const params = rules[0]!.params
    const calendar = params?.kind === 'window' && nearBoundaries ? params.calendar : undefined
    const someTime = fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 })
    const start =
      calendar === undefined
        ? someTime
        : fc
            .record({ t: someTime, before: fc.integer({ min: 0, max: 10_000 }) })
            .map(({ t, before }) => calendar.windowAt(t)[1] - before)
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('reserve' as const),
          dt: dtArb,
          keys: fc.array(fc.nat(KEYS.length - 1), { minLength: count, maxLength: count }),
          costs: fc.array(costs, { minLength: count, maxLength: count }),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('settle' as const),
          dt: dtArb,
          of: fc.nat(),
          actuals: fc.array(fc.constantFrom(...ACTUALS), { minLength: count, maxLength: count }),
          draws: fc.array(fc.nat(), { minLength: count, maxLength: count }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({ kind: fc.constant('cancel' as const), dt: dtArb, of: fc.nat() }),
      },
    )
    return fc.record({
      rules: fc.constant(rules),
      start,
      steps: fc.array(stepArb, { minLength: 1, maxLength: 25 }),
    })
  })
}

/** The actual cost of a settlement of `charged` under `algorithm`, of the kind drawn. */
function actualOf(kind: (typeof ACTUALS)[number], charged: number, limit: number, draw: number) {
  if (kind === 'lower') return charged === 0 ? 0 : draw % charged
  if (kind === 'equal') return charged
  if (kind === 'higher') return Math.min(limit, charged + 1 + (draw % limit))
  if (kind === 'zero') return 0
  return limit + 1 + (draw % (2 * limit + 2))
}

/**
 * Runs `trace` on the memory store and the Redis store, expecting the same decisions for every
 * reservation and the same inspection of every rule's keys after every step.
 *
 * The Redis store deletes a state it writes back fresh (a bucket refilled by a cancel, a log
 * emptied), where the memory store keeps it until it needs the room; for a settlement that charges
 * more, a kept state and a dropped one differ (the extra goes on the state's own time, or on
 * now's), so the memory store here forgets a state it wrote fresh, as Redis does.
 *
 * `acrossSlots`: the Redis store is on a Cluster, where the two identities lie in different
 * slots. A request denied there was charged, then given back, in every slot whose charges all
 * passed (see consumeAcrossSlots): a state then rewritten at now, which the memory store, which
 * writes nothing for a denied request, does here too (a charge and its refund at now).
 */
export async function expectSameAsMemory(
  redis: Store,
  trace: SettleTrace,
  { acrossSlots = false } = {},
): Promise<void> {
  const memory: MemoryStore = memoryStore()
  const rules = trace.rules.map((algorithm, i) => ({ rule: `rule-${i}`, algorithm }))
  const open: { charges: Charge[]; at: number }[] = []
  let now = trace.start

  const dropFresh = (written: readonly Charge[]) => {
    for (const { rule, algorithm, key } of written) {
      const until = memory.heldUntil(rule, algorithm, key)
      if (until !== undefined && until <= now) memory.forget(rule, algorithm, key)
    }
  }

  const settle = async (charges: readonly Charge[], at: number, actuals: readonly number[]) => {
    const settlements: Settlement[] = charges.map((charge, i) => ({
      ...charge,
      actual: actuals[i]!,
    }))
    memory.settle(settlements, at, now)
    await redis.settle!(settlements, at, now)
    dropFresh(settlements.filter((s) => s.actual !== s.cost))
  }

  for (const [index, step] of trace.steps.entries()) {
    now = Math.min(MAX_TIME_MS, now + step.dt)
    const where = `step ${index} (${step.kind}) at ${now}`
    if (step.kind === 'reserve') {
      const charges: Charge[] = rules.map(({ rule, algorithm }, i) => ({
        rule,
        algorithm,
        key: KEYS[step.keys[i]!]!,
        cost: Math.min(step.costs[i]!, algorithm.limit),
        shadow: false,
      }))
      const held = charges.map((c) => memory.heldUntil(c.rule, c.algorithm, c.key) !== undefined)
      const expected = memory.consume(charges, now)
      const actual = await redis.consume(charges, now)
      expect(normalise(actual.decisions), where).toEqual(normalise(expected.decisions))
      if (expected.decisions.every((d) => d.allowed)) open.push({ charges, at: now })
      // A denied request writes nothing in Redis; the memory store keeps the fresh states it
      // made for keys it did not hold, to decide on: forgotten, as Redis holds none.
      else {
        for (const [i, c] of charges.entries())
          if (!held[i]) memory.forget(c.rule, c.algorithm, c.key)
      }
      if (!expected.decisions.every((d) => d.allowed) && acrossSlots) {
        for (const key of KEYS) {
          const slot = charges.filter((charge) => charge.key === key)
          if (slot.length === 0 || slot.length === charges.length) continue
          if (!slot.every((charge) => expected.decisions[charges.indexOf(charge)]!.allowed))
            continue
          memory.consume(slot, now)
          memory.refund(slot, now, now)
          dropFresh(slot)
        }
      }
    } else if (open.length > 0) {
      const [taken] = open.splice(step.of % open.length, 1)
      const { charges, at } = taken!
      const actuals =
        step.kind === 'cancel'
          ? charges.map(() => 0)
          : charges.map((charge, i) =>
              actualOf(step.actuals[i]!, charge.cost, charge.algorithm.limit, step.draws[i]!),
            )
      await settle(charges, at, actuals)
    }
    // Every rule's keys, inspected (cost 0 writes nothing): the states as decisions read them.
    for (const { rule, algorithm } of rules) {
      for (const key of KEYS) {
        const probe: Charge[] = [{ rule, algorithm, key, cost: 0, shadow: false }]
        const expected = normalise(memory.consume(probe, now).decisions)
        const actual = normalise((await redis.consume(probe, now)).decisions)
        expect(actual, `${where}: ${rule} (${algorithm.name}) on ${key}`).toEqual(expected)
      }
    }
  }
}
