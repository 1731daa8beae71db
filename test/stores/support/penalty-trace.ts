// Random traces of penalised requests and operator's calls, run through the memory store and
// another store (Redis) with injected time: the penalty differential.
import { type MemoryStore, memoryStore } from '@tollgate/core'
import {
  type Algorithm,
  type Charge,
  type KeyStatus,
  MAX_TIME_MS,
  type Penalty,
  type Store,
} from '@tollgate/core/store'
import fc from 'fast-check'
import { expect } from 'vitest'
import { algorithmArb, normalise } from './trace.js'

/** Two identities: on a Redis Cluster, requests whose rules key on both span two slots. */
const KEYS = ['ip:203.0.113.7', 'api_key:k_1']

type Jump = {
  readonly rule: number
  readonly key: number
  readonly to: 'block end' | 'forget'
  readonly offset: -1 | 0 | 1
}

type Rule = { readonly algorithm: Algorithm; readonly penalty: Penalty | undefined }

type Step =
  | {
      readonly kind: 'request'
      readonly dt: number
      readonly keys: readonly number[]
      readonly costs: readonly number[]
      /** A rule charged twice in the request (its index), or none. */
      readonly twice: number | undefined
      /** Time moved on to a key's block end or forget time (± 1 ms), where it lies ahead. */
      readonly jump: Jump | undefined
    }
  | {
      readonly kind: 'block'
      readonly dt: number
      readonly rule: number
      readonly key: number
      readonly forMs: number
    }
  | {
      readonly kind: 'unblock' | 'reset'
      readonly dt: number
      readonly rule: number
      readonly key: number
    }

export type PenaltyTrace = {
  readonly rules: readonly Rule[]
  readonly start: number
  readonly steps: readonly Step[]
}

/** Blocks of a few ms to a few s, growing or not, forgotten soon or never within a trace. */
const penaltyArb: fc.Arbitrary<Penalty> = fc
  .record({
    blockMs: fc.integer({ min: 1, max: 3000 }),
    factor: fc.integer({ min: 1, max: 4 }),
    longer: fc.integer({ min: 0, max: 20_000 }),
    forgetAfterMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })),
  })
  .map(({ blockMs, factor, longer, forgetAfterMs }) => ({
    blockMs,
    factor,
    maxBlockMs: blockMs + longer,
    forgetAfterMs,
  }))

const dtArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 400 }) },
  { weight: 2, arbitrary: fc.integer({ min: 400, max: 5000 }) },
  // Past blocks and their forgetting.
  { weight: 1, arbitrary: fc.integer({ min: 5000, max: 70_000 }) },
)

/**
 * 1–3 rules (any algorithm but concurrency, which takes no penalty), most of them penalised; each
 * request charges every rule (a key each, of two), sometimes one of them twice; between them, an
 * operator blocks, unblocks or resets a key.
 */
export const penaltyTraceArb: fc.Arbitrary<PenaltyTrace> = fc
  .array(
    fc.record({
      algorithm: algorithmArb,
      penalty: fc.option(penaltyArb, { nil: undefined, freq: 4 }),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .chain((rules) => {
    const count = rules.length
    const ruleArb = fc.nat(count - 1)
    const keyArb = fc.nat(KEYS.length - 1)
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('request' as const),
          dt: dtArb,
          keys: fc.array(keyArb, { minLength: count, maxLength: count }),
          costs: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: count, maxLength: count }),
          twice: fc.option(ruleArb, { nil: undefined, freq: 4 }),
          jump: fc.option(
            fc.record({
              rule: ruleArb,
              key: keyArb,
              to: fc.constantFrom('block end' as const, 'forget' as const),
              offset: fc.constantFrom(-1 as const, 0 as const, 1 as const),
            }),
            { nil: undefined, freq: 2 },
          ),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('block' as const),
          dt: dtArb,
          rule: ruleArb,
          key: keyArb,
          forMs: fc.integer({ min: -2000, max: 30_000 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constantFrom('unblock' as const, 'reset' as const),
          dt: dtArb,
          rule: ruleArb,
          key: keyArb,
        }),
      },
    )
    return fc.record({
      rules: fc.constant(rules),
      start: fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
      steps: fc.array(stepArb, { minLength: 1, maxLength: 30 }),
    })
  })
  .filter((trace) => trace.rules.every((rule) => rule.algorithm.params?.kind !== 'concurrency'))

/**
 * Runs `trace` on the memory store and `other`, expecting the same decisions and offences for
 * every request, and the same `peek` of every rule's keys after every step.
 *
 * A request denied by a rule's limit writes nothing in Redis; the memory store keeps the fresh
 * states it made to decide on, for keys it did not hold: forgotten here, as Redis holds none.
 */
export async function expectPenaltiesSameAsMemory(
  other: Store,
  trace: PenaltyTrace,
): Promise<void> {
  const memory: MemoryStore = memoryStore()
  const rules = trace.rules.map(({ algorithm, penalty }, i) => ({
    rule: `rule-${i}`,
    algorithm,
    penalty,
  }))
  let now = trace.start
  const ref = (rule: number, key: number) => ({
    rule: rules[rule]!.rule,
    algorithm: rules[rule]!.algorithm,
    key: KEYS[key]!,
  })
  for (const [index, step] of trace.steps.entries()) {
    now = Math.min(MAX_TIME_MS, now + step.dt)
    if (step.kind === 'request' && step.jump !== undefined) {
      const { rule, key, to, offset } = step.jump
      const penalty = rules[rule]!.penalty
      const offences = memory.peek(ref(rule, key), penalty, now).offences
      if (penalty !== undefined && offences !== undefined) {
        const at = offences.blockedUntil + (to === 'forget' ? penalty.forgetAfterMs : 0) + offset
        if (at > now) now = Math.min(MAX_TIME_MS, at)
      }
    }
    const where = `step ${index} (${step.kind}) at ${now}`
    if (step.kind === 'request') {
      const charges: Charge[] = rules.map(({ rule, algorithm, penalty }, i) => ({
        rule,
        algorithm,
        key: KEYS[step.keys[i]!]!,
        cost: Math.min(step.costs[i]!, algorithm.limit),
        shadow: false,
        penalty,
      }))
      if (step.twice !== undefined) charges.push({ ...charges[step.twice]!, cost: 1 })
      const held = charges.map((c) => memory.heldUntil(c.rule, c.algorithm, c.key) !== undefined)
      const expected = memory.consumePenalised(charges, now)
      const actual = await other.consumePenalised!(charges, now)
      expect({ decisions: normalise(actual.decisions), offences: actual.offences }, where).toEqual({
        decisions: normalise(expected.decisions),
        offences: expected.offences,
      })
      if (!expected.decisions.every((d) => d.allowed)) {
        for (const [i, c] of charges.entries())
          if (!held[i]) memory.forget(c.rule, c.algorithm, c.key)
      }
    } else if (step.kind === 'block') {
      const penalty = rules[step.rule]!.penalty ?? {
        blockMs: 1,
        factor: 1,
        maxBlockMs: 1,
        forgetAfterMs: 1000,
      }
      const until = Math.max(0, now + step.forMs)
      memory.block(ref(step.rule, step.key), penalty, until, now)
      await other.block!(ref(step.rule, step.key), penalty, until, now)
    } else {
      memory[step.kind](ref(step.rule, step.key), now)
      await other[step.kind]!(ref(step.rule, step.key), now)
    }
    for (const [r, { rule, algorithm, penalty }] of rules.entries()) {
      for (const [k, key] of KEYS.entries()) {
        const seen = (status: KeyStatus) => ({
          ...status,
          decision: normalise([status.decision])[0],
        })
        const expected = seen(memory.peek(ref(r, k), penalty, now))
        const actual = seen(await other.peek!(ref(r, k), penalty, now))
        expect(actual, `${where}: peek ${rule} (${algorithm.name}) on ${key}`).toEqual(expected)
      }
    }
  }
}
