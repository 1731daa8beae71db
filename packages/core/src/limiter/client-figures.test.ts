// Per-client figures (the `figures` option) against an exact model: each key decided by its own
// figures' algorithm on a plain state, carried by the rule's onChange (carryState, whose carries
// carry.test.ts checks against the definitions) whenever the figures it is charged under change.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CarryStrategy, DEFAULT_CARRY } from '../algorithms/carried-use.js'
import { carryState } from '../algorithms/carry.js'
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '../algorithms/index.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import { sameRule } from '../store/rule-tables.js'
import { createLimiter } from './create-limiter.js'
import type { ClientFigures } from './figures-option.js'
import type { Verdict } from './types.js'

const STRATEGIES: readonly (CarryStrategy | undefined)[] = [
  undefined,
  'keep',
  'proportional',
  'reset',
  'additive',
]
const CACHE_FOR_MS = 1000
const START = 1_000_000

type Family = {
  readonly names: readonly string[]
  readonly base: Record<string, unknown>
  /** The algorithm of a rule named `name` under `figures` (the base's where one is left out). */
  readonly algorithm: (name: string, figures: Record<string, number>) => Algorithm
  readonly figures: fc.Arbitrary<Record<string, number>>
  /** `figures` as a lookup gives them (durations with their unit). */
  readonly given: (figures: Record<string, number>) => ClientFigures
}

const RATE_BASE = { rate: 2, periodMs: 1000, burst: 5 }
const WINDOW_BASE = { limit: 5, windowMs: 2000 }
const RATE_FACTORIES: Record<string, (p: never) => Algorithm> = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
}
const WINDOW_FACTORIES: Record<string, (p: never) => Algorithm> = {
  fixed_window: fixedWindow,
  sliding_window: slidingWindow,
  sliding_log: slidingLog,
}

const FAMILIES: readonly Family[] = [
  {
    names: Object.keys(RATE_FACTORIES),
    base: { rate: 2, period: '1s', burst: 5 },
    algorithm: (name, f) => RATE_FACTORIES[name]!({ ...RATE_BASE, ...f } as never),
    figures: fc.record(
      {
        rate: fc.integer({ min: 1, max: 20 }),
        periodMs: fc.integer({ min: 100, max: 5000 }),
        burst: fc.integer({ min: 1, max: 30 }),
      },
      { requiredKeys: [] },
    ),
    given: ({ periodMs, ...rest }) =>
      ({ ...rest, ...(periodMs === undefined ? {} : { period: `${periodMs}ms` }) }) as never,
  },
  {
    names: Object.keys(WINDOW_FACTORIES),
    base: { limit: 5, window: '2s' },
    algorithm: (name, f) => WINDOW_FACTORIES[name]!({ ...WINDOW_BASE, ...f } as never),
    figures: fc.record(
      { limit: fc.integer({ min: 1, max: 30 }), windowMs: fc.integer({ min: 500, max: 5000 }) },
      { requiredKeys: [] },
    ),
    given: ({ windowMs, ...rest }) =>
      ({ ...rest, ...(windowMs === undefined ? {} : { window: `${windowMs}ms` }) }) as never,
  },
]

type Step = { readonly key: number; readonly set: number; readonly gap: number }
const steps = fc.array(
  fc.record({
    key: fc.integer({ min: 0, max: 2 }),
    set: fc.integer({ min: 0, max: 3 }),
    gap: fc.integer({ min: 0, max: 1500 }),
  }),
  { maxLength: 60 },
)

function fresh(algorithm: Algorithm, now: number): number[] {
  const state = new Array<number>(algorithm.stateSize).fill(0)
  algorithm.init(state, 0, now)
  return state
}

describe('per-client figures, against an exact model', () => {
  for (const family of FAMILIES) {
    it(`decides each key by its own figures and carries its state when they change (${family.names.join(', ')})`, () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...family.names),
          fc.constantFrom(...STRATEGIES),
          // Set 0 is "none": the rule's own figures.
          fc.array(family.figures, { minLength: 3, maxLength: 3 }),
          steps,
          (name, onChange, sets, trace) => {
            const figuresOf = (set: number) => (set === 0 ? undefined : sets[set - 1]!)
            const current = new Map<string, number>()
            const rule = {
              id: 'per-key',
              match: { identity: 'api_key' },
              algorithm: name,
              ...family.base,
              ...(onChange === undefined ? {} : { onChange }),
            } as RuleConfig
            const limiter = createLimiter({
              rules: [rule],
              store: memoryStore({ seed: 7 }),
              logger: false,
              figures: {
                'per-key': {
                  of: ({ identities }) => {
                    const figures = figuresOf(current.get(identities['api_key']!)!)
                    return figures === undefined ? undefined : family.given(figures)
                  },
                  cacheFor: `${CACHE_FOR_MS}ms`,
                },
              },
            })
            const base = family.algorithm(name, {})
            const strategy = onChange ?? DEFAULT_CARRY[base.name]
            const model = new Map<string, { algorithm: Algorithm; state: number[] }>()
            const cached = new Map<string, { set: number; until: number }>()
            let now = START
            for (const { key, set, gap } of trace as Step[]) {
              now += gap
              const client = `k${key}`
              current.set(client, set)
              let entry = cached.get(client)
              if (entry === undefined || now >= entry.until) {
                entry = { set, until: now + CACHE_FOR_MS }
                cached.set(client, entry)
              }
              const figures = figuresOf(entry.set)
              const algorithm = figures === undefined ? base : family.algorithm(name, figures)
              let held = model.get(client)
              if (held === undefined) held = { algorithm, state: fresh(algorithm, now) }
              else if (!sameRule(held.algorithm, algorithm)) {
                const carried = carryState(held.algorithm, held.state, 0, algorithm, now, strategy)
                held = { algorithm, state: carried ?? fresh(algorithm, now) }
              }
              model.set(client, held)
              const expected = held.algorithm.decide(held.state, 0, 1, now, true)
              const verdict = limiter.decide(
                { method: 'GET', path: '/', identities: { api_key: client } },
                { now },
              ) as Verdict
              const d = verdict.decisions[0]!
              expect([d.allowed, d.remaining, d.limit]).toEqual([
                expected.allowed,
                expected.remaining,
                expected.limit,
              ])
            }
          },
        ),
        { numRuns: 150 },
      )
    })
  }
})
