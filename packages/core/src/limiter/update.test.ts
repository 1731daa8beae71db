import { describe, expect, it } from 'vitest'
import { defineRules } from '../rules/define-rules.js'
import { parseRules } from '../rules/parse-rules.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import { createLimiter } from './create-limiter.js'
import type { Limiter, Verdict } from './types.js'

const FACTS = { method: 'GET', path: '/', identities: { ip: '203.0.113.7' } }
const bucket = (burst: number, extra: Partial<RuleConfig> = {}) =>
  ({
    id: 'api',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1h',
    burst,
    ...extra,
  }) as RuleConfig

function spend(limiter: Limiter, times: number, now: number): Verdict[] {
  return Array.from({ length: times }, () => limiter.decide(FACTS, { now }) as Verdict)
}

function setup(rules: RuleConfig[]) {
  const warnings: string[] = []
  const store = memoryStore({ seed: 1 })
  const limiter = createLimiter({ rules, store, logger: { warn: (m) => warnings.push(m) } })
  return { limiter, store, warnings }
}

describe('limiter.update', () => {
  it('keeps what was used by default: a raised burst gives exactly the extra allowance', () => {
    const { limiter } = setup([bucket(10)])
    spend(limiter, 7, 1000)
    expect(limiter.update!([bucket(20)])).toEqual({
      added: [],
      removed: [],
      changed: ['api'],
      unchanged: [],
    })
    const [next] = spend(limiter, 1, 1000)
    expect(next!.decisions[0]!.remaining).toBe(12)
    expect(next!.decisions[0]!.limit).toBe(20)
  })

  it('carries by the rule’s onChange', () => {
    for (const [onChange, remaining] of [
      ['keep', 12],
      ['additive', 12],
      ['proportional', 5],
      ['reset', 19],
    ] as const) {
      const { limiter } = setup([bucket(10)])
      spend(limiter, 7, 1000)
      limiter.update!([bucket(20, { onChange })])
      expect(spend(limiter, 1, 1000)[0]!.decisions[0]!.remaining, onChange).toBe(remaining)
    }
  })

  it('refuses an invalid set whole, logs and counts it, and keeps the running rules', () => {
    const { limiter, warnings } = setup([bucket(10)])
    spend(limiter, 3, 1000)
    let thrown: unknown
    try {
      limiter.update!([bucket(20), { ...bucket(0), id: 'other' }])
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ code: 'ERR_RL_INVALID_RULE', rule: 'other', field: 'burst' })
    expect(String((thrown as Error).message)).toContain('burst')
    expect(limiter.updatesRefused).toBe(1)
    expect(warnings.some((w) => w.includes('WARN_RULES_UPDATE_REFUSED'))).toBe(true)
    expect(limiter.rules.map((rule) => (rule as { burst?: number }).burst)).toEqual([10])
    expect(spend(limiter, 1, 1000)[0]!.decisions[0]!.remaining).toBe(6)
  })

  it('refuses an unknown onChange naming the rule and field', () => {
    const { limiter } = setup([bucket(10)])
    expect(() => limiter.update!([bucket(20, { onChange: 'half' as never })])).toThrow(
      /api.*onChange|onChange.*api/s,
    )
  })

  it('starts added rules fresh and drops removed rules’ states', () => {
    const { limiter, store } = setup([bucket(10), { ...bucket(5), id: 'other' }])
    spend(limiter, 4, 1000)
    expect(store.size).toBe(2)
    const summary = limiter.update!([bucket(10), { ...bucket(3), id: 'third' }])
    expect(summary).toEqual({
      added: ['third'],
      removed: ['other'],
      changed: [],
      unchanged: ['api'],
    })
    expect(store.size).toBe(1)
    const [verdict] = spend(limiter, 1, 1000)
    expect(verdict!.decisions.map((d) => [d.rule, d.remaining])).toEqual([
      ['api', 5],
      ['third', 2],
    ])
  })
})

describe('limiter.update adding a rule that settles', () => {
  it('settles it, though the limiter started without one', async () => {
    const { limiter } = setup([bucket(10)])
    limiter.update!([bucket(10), { ...bucket(100, { cost: 40, settle: true }), id: 'tokens' }])
    const verdict = limiter.decide(FACTS, { now: 1000 }) as Verdict
    expect(await limiter.settle!(verdict, 10, { now: 1000 })).toEqual({
      status: 'settled',
      settled: ['tokens'],
      expired: [],
    })
    const [after] = spend(limiter, 1, 1000)
    // 100 − 10 settled − 40 reserved now.
    expect(after!.decisions.map((d) => [d.rule, d.remaining])).toEqual([
      ['api', 8],
      ['tokens', 50],
    ])
  })
})

describe('onChange, validated like every rule field', () => {
  it('is read from a rules file as on_change, and refused there naming the file’s field', () => {
    const file = (onChange: unknown, algorithm = 'fixed_window') => ({
      rules: [
        {
          id: 'daily',
          match: { identity: 'api_key' },
          algorithm,
          limit: 100,
          ...(algorithm === 'fixed_window' && { window_s: 86_400 }),
          on_change: onChange,
        },
      ],
    })
    expect(parseRules(file('proportional'))[0]!.onChange).toBe('proportional')
    expect(() => parseRules(file('halve'))).toThrow(
      /rule "daily": on_change: expected one of "keep"/,
    )
    expect(() => parseRules(file('reset', 'concurrency'))).toThrow(
      /rule "daily": on_change: a concurrency rule's requests in flight always carry over/,
    )
  })

  it('leaves a rule without it as it was (no field in the validated rule)', () => {
    expect('onChange' in defineRules([bucket(3)])[0]!).toBe(false)
  })
})

describe('version, validated like every rule field', () => {
  it('is a whole number ≥ 0, read from a rules file too, and refused naming the field', () => {
    expect(defineRules([bucket(3, { version: 4 })])[0]!.version).toBe(4)
    const file = (version: unknown) => ({
      rules: [
        {
          id: 'daily',
          match: { identity: 'ip' },
          algorithm: 'fixed_window',
          limit: 9,
          window_s: 60,
          version,
        },
      ],
    })
    expect(parseRules(file(0))[0]!.version).toBe(0)
    for (const bad of [-1, 1.5, '2', 2 ** 53]) {
      expect(() => parseRules(file(bad)), String(bad)).toThrow(
        /rule "daily": version: expected a whole number ≥ 0/,
      )
    }
    expect('version' in defineRules([bucket(3)])[0]!).toBe(false)
  })

  it('changes nothing on the memory store: a change of version alone leaves the rule as it is', () => {
    const { limiter } = setup([bucket(10, { version: 1 })])
    spend(limiter, 4, 1000)
    expect(limiter.update!([bucket(10, { version: 2 })])).toMatchObject({ unchanged: ['api'] })
    expect(spend(limiter, 1, 1000)[0]!.decisions[0]!.remaining).toBe(5)
    // Its figures change without raising it, as the memory store needs none.
    expect(limiter.update!([bucket(20, { version: 2 })])).toMatchObject({ changed: ['api'] })
    expect(spend(limiter, 1, 1000)[0]!.decisions[0]!.remaining).toBe(14)
  })
})
