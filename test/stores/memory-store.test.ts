import {
  fixedWindow,
  gcra,
  leakyBucket,
  type MemoryStore,
  memoryStore,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import {
  type Algorithm,
  type Charge,
  isRateLimitError,
  type Outcome,
  type Store,
} from '@tollgate/core/store'
import { referenceStore } from '@tollgate/test-utils'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { describeStore } from './support/store-suite.js'
import { expectSameAsReference, longLogArbs, traceArb } from './support/trace.js'

// Hundreds of traces per property: a loaded machine needs more than the default 5 s.
vi.setConfig({ testTimeout: 60_000 })

describeStore('memory store', { create: () => memoryStore() })
describeStore('memory store with room for 4 keys a rule', {
  create: () => memoryStore({ maxKeys: 4 }),
  // Evicting a counting key changes decisions: only the reference-free contract applies.
  compareWithReference: false,
})

/*
 * The memory store against the oracle: the same random traces, over every algorithm, several
 * keys (short, unicode, longer than one 64-unit hash chunk) and multi-rule requests with shadow
 * charges, must give identical decisions. Time never steps back here, so reclaiming a fresh
 * entry must be invisible; LRU eviction is the one thing that may change a decision.
 */

const periods = [1, 7, 1000, 60_000]
const rate = fc.record({
  rate: fc.integer({ min: 1, max: 12 }),
  periodMs: fc.constantFrom(...periods),
  burst: fc.integer({ min: 1, max: 8 }),
})
const window = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.constantFrom(...periods),
})
const algorithm: fc.Arbitrary<Algorithm> = fc.oneof(
  rate.map(tokenBucket),
  rate.map(gcra),
  rate.map(leakyBucket),
  window.map(fixedWindow),
  window.map(slidingLog),
  window.map(slidingWindow),
)

const keys = [
  'ip:203.0.113.7',
  'ip:203.0.113.8',
  'api_key:k_123',
  '',
  'user:zoë 🚀',
  `long:${'x'.repeat(70)}`,
  `long:${'x'.repeat(69)}y`,
  `acct:{42}\n${'é'.repeat(130)}`,
  // Many more keys, so that tables keep inserting (and sweeping) throughout a trace.
  ...Array.from({ length: 56 }, (_, i) => `ip:10.0.0.${i}`),
]

type Step =
  | { kind: 'consume'; dt: number; charges: ChargeSpec[] }
  | { kind: 'one'; dt: number; charge: ChargeSpec }
  | { kind: 'refund'; dt: number; back: number; charges: ChargeSpec[] }
type ChargeSpec = { rule: number; key: number; cost: number; shadow: boolean }

const dt = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 400 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 130_000 }) },
)
const chargeSpec = fc.record({
  rule: fc.nat(5),
  key: fc.oneof(fc.nat(7), fc.nat(keys.length - 1)),
  cost: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }) }, fc.constant(9)),
  shadow: fc.boolean(),
})
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('consume' as const),
      dt,
      charges: fc.array(chargeSpec, { minLength: 1, maxLength: 4, size: 'max' }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('one' as const), dt, charge: chargeSpec }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      dt,
      back: fc.nat(5),
      charges: fc.array(chargeSpec, { minLength: 1, maxLength: 3, size: 'max' }),
    }),
  },
)

type Result = { ok: Outcome | undefined } | { error: string }

function attempt(run: () => Outcome | undefined): Result {
  try {
    return { ok: run() }
  } catch (error) {
    if (isRateLimitError(error)) return { error: error.code }
    throw error
  }
}

/** Replays `steps` on both stores, calling `compare` after each one. */
function replay(
  rules: readonly Algorithm[],
  steps: readonly Step[],
  memory: MemoryStore,
  reference: Store,
  compare: (mine: Result, theirs: Result) => boolean,
): void {
  let now = 1_700_000_000_000
  const times: number[] = [now]
  const toCharge = (spec: ChargeSpec): Charge => ({
    rule: `rule-${spec.rule}`,
    algorithm: rules[spec.rule]!,
    key: keys[spec.key]!,
    cost: spec.cost,
    shadow: spec.shadow,
  })
  for (const item of steps) {
    now += item.dt
    times.push(now)
    let mine: Result
    let theirs: Result
    if (item.kind === 'refund') {
      const charges = item.charges.map(toCharge)
      const chargedAt = times[Math.max(0, times.length - 1 - item.back)]!
      mine = attempt(() => {
        memory.refund(charges, chargedAt, now)
        return undefined
      })
      theirs = attempt(() => {
        void reference.refund(charges, chargedAt, now)
        return undefined
      })
    } else if (item.kind === 'one') {
      const charge = toCharge(item.charge)
      mine = attempt(() => ({
        decisions: [memory.consumeOne(charge.rule, charge.algorithm, charge.key, charge.cost, now)],
        at: now,
      }))
      theirs = attempt(() => reference.consume([{ ...charge, shadow: false }], now) as Outcome)
    } else {
      const charges = item.charges.map(toCharge)
      mine = attempt(() => memory.consume(charges, now))
      theirs = attempt(() => reference.consume(charges, now) as Outcome)
    }
    if (!compare(mine, theirs)) return
  }
}

const rules = fc.array(algorithm, { minLength: 6, maxLength: 6 })
const trace = fc.array(step, { minLength: 1, maxLength: 150, size: 'max' })

describe('memory store against the reference store', () => {
  it('makes identical decisions on random traces while nothing is evicted', () => {
    fc.assert(
      fc.property(
        rules,
        trace,
        fc.integer({ min: keys.length, max: 100 }),
        (algorithms, steps, maxKeys) => {
          const memory = memoryStore({ maxKeys })
          replay(algorithms, steps, memory, referenceStore(), (mine, theirs) => {
            expect(mine).toEqual(theirs)
            return true
          })
          expect(memory.evictions).toBe(0)
        },
      ),
      { numRuns: 400 },
    )
  })

  it('stays identical when a full table reclaims fresh keys, up to its first eviction', () => {
    fc.assert(
      fc.property(rules, trace, fc.integer({ min: 1, max: 40 }), (algorithms, steps, maxKeys) => {
        const memory = memoryStore({ maxKeys })
        replay(algorithms, steps, memory, referenceStore(), (mine, theirs) => {
          if (memory.evictions > 0) return false
          expect(mine).toEqual(theirs)
          return true
        })
      }),
      { numRuns: 400 },
    )
  })

  it('decides long sliding logs exactly as the reference store while their blocks grow, shrink and move', async () => {
    // Logs of 100–400 entries on a few keys, costs adding dozens at once: every log moves
    // through several rooms, and back down as its entries age out.
    const keys = ['ip:203.0.113.7', 'ip:203.0.113.8', 'api_key:k_1']
    await fc.assert(
      fc.asyncProperty(traceArb(keys, 40, longLogArbs), (trace) =>
        expectSameAsReference(memoryStore({ maxBytes: 1024 * 1024 }), trace),
      ),
      { numRuns: 200 },
    )
  })

  it('decides exactly as the reference store while a small bound compacts logs, up to its first eviction', () => {
    // 1 MiB for keys whose logs take up to 40 kB each: the arena fills, frees and compacts.
    const big = fc
      .record({
        limit: fc.integer({ min: 1_000, max: 5_000 }),
        windowMs: fc.constantFrom(500, 3000),
      })
      .map(slidingLog)
    fc.assert(
      fc.property(fc.array(big, { minLength: 6, maxLength: 6 }), trace, (algorithms, steps) => {
        const memory = memoryStore({ maxBytes: 1024 * 1024 })
        replay(algorithms, steps, memory, referenceStore(), (mine, theirs) => {
          if (memory.evictions > 0) return false
          expect(mine).toEqual(theirs)
          return true
        })
      }),
      { numRuns: 200 },
    )
  })
})
