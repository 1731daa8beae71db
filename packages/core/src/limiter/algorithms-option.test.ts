import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import type { AlgorithmName } from '../algorithms/types.js'
import { defineRules } from '../rules/define-rules.js'
import { RuleValidationError } from '../rules/issues.js'
import type { RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'

const NAMES = Object.keys(BUILT_IN_ALGORITHMS) as AlgorithmName[]
const RATE = ['token_bucket', 'gcra', 'leaky_bucket', 'leaky_queue']

const ruleOf = (name: AlgorithmName, quota: number, id: string): RuleConfig =>
  (RATE.includes(name)
    ? { id, match: { identity: 'ip' }, algorithm: name, rate: quota, period: '2s', burst: quota }
    : name === 'concurrency'
      ? { id, match: { identity: 'ip' }, algorithm: name, limit: quota }
      : {
          id,
          match: { identity: 'ip' },
          algorithm: name,
          limit: quota,
          window: '2s',
        }) as RuleConfig

describe('the algorithms option of createLimiter', () => {
  it('decides as the built-in table does, for every algorithm, given only the rules’ algorithms', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NAMES),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ key: fc.constantFrom('a', 'b'), advanceMs: fc.nat(1500) }), {
          maxLength: 20,
        }),
        (name, quota, calls) => {
          const rules = [ruleOf(name, quota, 'r')]
          const full = createLimiter({ rules })
          const lean = createLimiter({
            rules,
            algorithms: { [name]: BUILT_IN_ALGORITHMS[name] },
          })
          let now = 1_000_000
          for (const { key, advanceMs } of calls) {
            now += advanceMs
            expect(lean.check(key, 'r', { now })).toEqual(full.check(key, 'r', { now }))
          }
        },
      ),
    )
  })

  it('refuses a rule validated elsewhere whose algorithm it was not given', () => {
    const rules = defineRules([ruleOf('gcra', 3, 'api'), ruleOf('fixed_window', 3, 'day')])
    const build = () => createLimiter({ rules, algorithms: { gcra: BUILT_IN_ALGORITHMS.gcra! } })
    expect(build).toThrow(RuleValidationError)
    expect(build).toThrow(/day.*algorithm.*fixed_window is not in the algorithms option/s)
  })

  it('refuses rules naming other algorithms, and a table that is not one', () => {
    const rules = [ruleOf('sliding_log', 3, 'login')]
    expect(() =>
      createLimiter({ rules, algorithms: { token_bucket: BUILT_IN_ALGORITHMS.token_bucket! } }),
    ).toThrow(/login.*algorithm/s)
    expect(() => createLimiter({ rules, algorithms: 'all' as never })).toThrow(
      /algorithms: expected/,
    )
  })
})
