// The simulator shows what the algorithms decide: on random traces, its decisions are those of
// the algorithm replayed alone with `step`, and its state readings agree with them.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type AlgorithmState, step } from '../algorithms/step.js'
import { defineRules } from '../rules/define-rules.js'
import type { RuleConfig } from '../rules/types.js'
import { algorithmOfRule } from './rule-algorithm.js'
import { simulate } from './simulate.js'

const rules: RuleConfig[] = [
  {
    id: 'tb',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 3,
    period: '1s',
    burst: 5,
  },
  { id: 'gcra', match: { identity: 'ip' }, algorithm: 'gcra', rate: 7, period: '2s', burst: 4 },
  { id: 'leaky', match: { identity: 'ip' }, algorithm: 'leaky_bucket', rate: 2, burst: 3 },
  { id: 'fixed', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 6, window: '1s' },
  { id: 'log', match: { identity: 'ip' }, algorithm: 'sliding_log', limit: 5, window: '1500ms' },
  { id: 'counter', match: { identity: 'ip' }, algorithm: 'sliding_window', limit: 6, window: '1s' },
]

const arrivalsArb = fc.array(
  fc.record({
    at: fc.integer({ min: 0, max: 5000 }),
    key: fc.constantFrom('a', 'b'),
    cost: fc.integer({ min: 0, max: 3 }),
  }),
  { maxLength: 60 },
)

describe('simulate, one rule at a time', () => {
  it.each(rules.map((rule) => [rule.algorithm, rule] as const))(
    '%s: every decision is the algorithm’s own, per key, in time order',
    (_name, config) => {
      const algorithm = algorithmOfRule(defineRules([config])[0]!)
      fc.assert(
        fc.property(arrivalsArb, (arrivals) => {
          const run = simulate({ rules: [config], arrivals, sampleEveryMs: 250 })
          const states = new Map<string, AlgorithmState>()
          const sorted = arrivals.map((a, i) => ({ ...a, i })).sort((x, y) => x.at - y.at)
          expect(run.requests.map((r) => r.index)).toEqual(sorted.map((a) => a.i))
          sorted.forEach((arrival, n) => {
            const result = step(algorithm, states.get(arrival.key), arrival.cost, arrival.at)
            if (result.decision.allowed) states.set(arrival.key, result.state)
            else if (!states.has(arrival.key)) states.set(arrival.key, result.state)
            const { cost: _cost, ...decided } = run.requests[n]!.decisions[0]!
            expect(decided).toMatchObject(result.decision)
            expect(run.requests[n]!.allowed).toBe(result.decision.allowed)
          })
          for (const sample of run.states) {
            expect(sample.used + sample.remaining).toBe(sample.limit)
            expect(sample.remaining).toBeGreaterThanOrEqual(0)
          }
          const times = run.states.map((s) => s.at)
          expect(times).toEqual([...times].sort((x, y) => x - y))
        }),
        { numRuns: 60 },
      )
    },
  )
})
