// limiter.update on the memory store: states carried lazily, key by key, as the pure carry says;
// each request decided under one rule set, even while it waits on a store that answers later.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CarryStrategy, DEFAULT_CARRY } from '../algorithms/carried-use.js'
import { carryState } from '../algorithms/carry.js'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import type { Algorithm } from '../algorithms/types.js'
import { defineRules } from '../rules/define-rules.js'
import type { RuleConfig } from '../rules/types.js'
import { algorithmOf } from '../rules/validate-rule.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import { limiterOperations } from './operator.js'
import type { KeyReport, RulesUpdate, Verdict } from './types.js'

const facts = (ip: string) => ({ method: 'GET', path: '/', identities: { ip } })
const START = 1_000_000

const FIGURES: Record<string, (n: number) => Partial<RuleConfig>> = {
  token_bucket: (n) => ({ rate: n, period: '10s', burst: n + 2 }),
  gcra: (n) => ({ rate: n, period: '7s', burst: n }),
  leaky_bucket: (n) => ({ rate: 3, period: '5s', burst: n }),
  fixed_window: (n) => ({ limit: n, window: '10s' }),
  sliding_window: (n) => ({ limit: n, window: '12s' }),
  sliding_log: (n) => ({ limit: n, window: '9s' }),
}

function rule(algorithm: string, n: number, onChange?: CarryStrategy): RuleConfig {
  return {
    id: 'api',
    match: { identity: 'ip' },
    algorithm,
    ...FIGURES[algorithm]!(n),
    ...(onChange && { onChange }),
  } as RuleConfig
}

/** The pure algorithm run on a mirror of each key's state: the model of the store. */
function mirror(algorithm: Algorithm) {
  const states = new Map<string, number[]>()
  let current = algorithm
  let pending: { from: Algorithm; strategy: CarryStrategy; keys: Set<string> } | undefined
  return {
    change(to: Algorithm, strategy: CarryStrategy) {
      pending = { from: current, strategy, keys: new Set(states.keys()) }
      current = to
    },
    decide(key: string, now: number) {
      if (pending?.keys.delete(key)) {
        const carried = carryState(
          pending.from,
          states.get(key)!,
          0,
          current,
          now,
          pending.strategy,
        )
        if (carried === undefined) states.delete(key)
        else states.set(key, carried)
      }
      let state = states.get(key)
      if (state === undefined) {
        state = new Array<number>(current.stateSize).fill(0)
        current.init(state, 0, now)
        states.set(key, state)
      }
      const d = current.decide(state, 0, 1, now, true)
      return [d.allowed, d.remaining]
    },
  }
}

const algorithmOfRule = (config: RuleConfig) =>
  algorithmOf(defineRules([config])[0]!, BUILT_IN_ALGORITHMS)

describe('limiter.update on the memory store', () => {
  it('carries each key, when it is next touched, as the pure carry does', () => {
    const step = fc.record({
      key: fc.constantFrom('a', 'b', 'c'),
      gap: fc.integer({ min: 0, max: 900 }),
    })
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(FIGURES)),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom<CarryStrategy | undefined>(
          undefined,
          'keep',
          'proportional',
          'reset',
          'additive',
        ),
        fc.array(step, { maxLength: 40 }),
        fc.array(step, { maxLength: 40 }),
        (algorithm, n, m, onChange, before, after) => {
          const limiter = createLimiter({
            rules: [rule(algorithm, n)],
            store: memoryStore({ seed: 3 }),
          })
          const model = mirror(algorithmOfRule(rule(algorithm, n)))
          let now = START
          const both = (key: string) => {
            const v = limiter.decide(facts(key), { now }) as Verdict
            const d = v.decisions[0]!
            expect([d.allowed, d.remaining]).toEqual(model.decide(`ip:${key}`, now))
          }
          for (const { key, gap } of before) {
            now += gap
            both(key)
          }
          limiter.update!([rule(algorithm, m, onChange)])
          const to = algorithmOfRule(rule(algorithm, m))
          // The same figures: the states stay as they are, whatever onChange says.
          if (m !== n) model.change(to, onChange ?? DEFAULT_CARRY[to.name])
          for (const { key, gap } of after) {
            now += gap
            both(key)
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('rewrites no key at update time, and carries a key untouched through two updates', () => {
    const store = memoryStore({ seed: 5 })
    const limiter = createLimiter({ rules: [rule('fixed_window', 10)], store })
    for (let i = 0; i < 5000; i++)
      limiter.decide(facts(`10.0.${i >> 8}.${i & 255}`), { now: START })
    limiter.decide(facts('203.0.113.7'), { now: START })
    limiter.decide(facts('203.0.113.7'), { now: START })
    const bytes = store.bytes
    limiter.update!([rule('fixed_window', 20)])
    limiter.update!([rule('fixed_window', 40)])
    // Tables for the new figures are made empty; the old keys stay where they are.
    expect(store.size).toBe(5001)
    expect(store.bytes - bytes).toBeLessThan(2000)
    const d = (limiter.decide(facts('203.0.113.7'), { now: START }) as Verdict).decisions[0]!
    expect(d.remaining).toBe(37)
    expect(store.size).toBe(5001)
  })

  it('decides each request under one rule set while it waits on a store that answers later', async () => {
    const inner = memoryStore({ seed: 7 })
    // Answers on a later task, in the order it was called.
    const later = <T>(f: () => T) => Promise.resolve().then(f)
    const store: Store = {
      consume: (charges, now) => later(() => inner.consume(charges, now)),
      refund: (charges, at, now) => later(() => inner.refund(charges, at, now)),
      updateRules: (changes, removed, now) => later(() => inner.updateRules(changes, removed, now)),
    }
    const second = (limit: number) =>
      ({ ...rule('fixed_window', limit), id: 'second' }) as RuleConfig
    const limiter = createLimiter({ rules: [rule('token_bucket', 8), second(5)], store })
    const ask = () => limiter.decide(facts('198.51.100.1'), { now: START }) as Promise<Verdict>
    const early = Array.from({ length: 6 }, ask)
    const updated = limiter.update!([rule('token_bucket', 18), second(9)])
    const during = Array.from({ length: 6 }, ask)
    await updated
    const late = Array.from({ length: 6 }, ask)
    const limits = async (list: Promise<Verdict>[]) =>
      (await Promise.all(list)).map((v) => v.decisions.map((d) => d.limit).join('/'))
    // Old: burst 10, limit 5. New: burst 20, limit 9. Never a mix.
    expect(await limits(early)).toEqual(Array(6).fill('10/5'))
    expect(await limits(during)).toEqual(Array(6).fill('10/5'))
    expect(await limits(late)).toEqual(Array(6).fill('20/9'))
    // 5 admitted under the old rules (the window's limit); kept: 4 more under the new.
    const admitted = async (list: Promise<Verdict>[]) =>
      (await Promise.all(list)).filter((v) => v.allowed).length
    expect((await admitted(early)) + (await admitted(during))).toBe(5)
    expect(await admitted(late)).toBe(4)
  })

  it('refuses to change figures on a store that cannot carry states, naming it', () => {
    const inner = memoryStore()
    const store: Store = {
      consume: (c, n) => inner.consume(c, n),
      refund: (c, a, n) => inner.refund(c, a, n),
    }
    const limiter = createLimiter({ rules: [rule('gcra', 4)], store, logger: false })
    expect(() => limiter.update!([rule('gcra', 5)])).toThrow(/store: cannot carry.*"api"/)
    expect(limiter.updatesRefused).toBe(1)
    // Adding and removing rules needs nothing of the store.
    expect(
      (limiter.update!([rule('gcra', 4), { ...rule('gcra', 2), id: 'more' }]) as RulesUpdate).added,
    ).toEqual(['more'])
  })

  it('refuses to change a rule whose requests wait, naming the rule and field', () => {
    const queue = {
      id: 'q',
      match: { identity: 'ip' },
      algorithm: 'leaky_queue',
      rate: 1,
      burst: 2,
    } as RuleConfig
    const limiter = createLimiter({ rules: [queue], logger: false })
    expect(() => limiter.update!([{ ...queue, burst: 3 } as RuleConfig])).toThrow(
      /rule "q".*algorithm/,
    )
    expect((limiter.update!([queue]) as RulesUpdate).unchanged).toEqual(['q'])
  })

  it('lets an operator see a key not yet carried as its next request will, and reset it', () => {
    const store = memoryStore({ seed: 9 })
    const limiter = createLimiter({ rules: [rule('sliding_log', 4)], store })
    for (let i = 0; i < 3; i++) limiter.decide(facts('192.0.2.9'), { now: START })
    limiter.update!([rule('sliding_log', 8, 'proportional')])
    const ops = limiterOperations(limiter)
    const seen = ops.peek('ip:192.0.2.9', 'api', { now: START }) as KeyReport
    // Three of four used: six of eight.
    expect(seen.decision.remaining).toBe(2)
    ops.reset('ip:192.0.2.9', 'api', { now: START })
    const d = (limiter.decide(facts('192.0.2.9'), { now: START }) as Verdict).decisions[0]!
    expect(d.remaining).toBe(7)
    // A key reset before anything carried it is not carried later either.
    for (let i = 0; i < 3; i++) limiter.decide(facts('192.0.2.10'), { now: START })
    limiter.update!([rule('sliding_log', 10)])
    ops.reset('ip:192.0.2.10', 'api', { now: START })
    const e = (limiter.decide(facts('192.0.2.10'), { now: START }) as Verdict).decisions[0]!
    expect(e.remaining).toBe(9)
  })
})
