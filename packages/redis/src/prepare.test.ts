import { concurrency, fixedWindow, gcra, slidingLog, slidingWindow } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import { chargePreparer, MAX_RULE_SETS, MAX_RULES_PER_SCRIPT } from './prepare.js'

const charge = (rule: string, algorithm: Charge['algorithm'], shadow = false): Charge => ({
  rule,
  algorithm,
  key: 'ip:192.0.2.1',
  cost: 1,
  shadow,
})

describe('chargePreparer', () => {
  it('gives alike rule sets one script, and tells shadow rules and order apart', () => {
    const preparer = chargePreparer(
      'tg',
      { serverTime: true, marginMs: 0 },
      { leaseMs: 10_000, owner: 1 },
    )
    const second = charge('second', gcra({ rate: 10, periodMs: 1000, burst: 10 }))
    const day = charge('day', fixedWindow({ limit: 1000, windowMs: 86_400_000 }))
    // Equal parameters in new objects: the same source, so the same script.
    const dayAgain = charge('day', fixedWindow({ limit: 1000, windowMs: 86_400_000 }))
    const set = preparer.ruleSetScript([second, day])
    expect(set).toBeDefined()
    expect(preparer.ruleSetScript([second, dayAgain])).toBe(set)
    expect(preparer.ruleSetScript([day, second])).not.toBe(set)
    expect(preparer.ruleSetScript([second, { ...day, shadow: true }])).not.toBe(set)
    expect(preparer.oneRuleScript(second)).not.toBe(preparer.oneRuleScript(day))
    // Five rule sets (three of one rule), each with its one-request and its batch script.
    expect(preparer.ruleSetScripts()).toHaveLength(10)
    expect(set!.one.sha).not.toBe(set!.many.sha)
  })

  it(`makes scripts for at most ${MAX_RULE_SETS} rule sets and ${MAX_RULES_PER_SCRIPT} rules per script; past that, the general script serves`, () => {
    const preparer = chargePreparer(
      'tg',
      { serverTime: true, marginMs: 0 },
      { leaseMs: 10_000, owner: 1 },
    )
    const tooMany = Array.from({ length: MAX_RULES_PER_SCRIPT + 1 }, (_, i) =>
      charge(`r${i}`, fixedWindow({ limit: 5, windowMs: 1000 })),
    )
    expect(preparer.ruleSetScript(tooMany)).toBeUndefined()
    const made = Array.from({ length: MAX_RULE_SETS + 10 }, (_, i) =>
      preparer.oneRuleScript(charge('r', fixedWindow({ limit: i + 1, windowMs: 1000 }))),
    )
    expect(made.slice(0, MAX_RULE_SETS).every((s) => s !== undefined)).toBe(true)
    expect(made.slice(MAX_RULE_SETS).every((s) => s === undefined)).toBe(true)
    const pair = [charge('a', gcra({ rate: 1, periodMs: 1000, burst: 1 })), tooMany[0]!]
    expect(preparer.ruleSetScript(pair)).toBeUndefined()
    expect(preparer.ruleSetScript(pair)).toBeUndefined()
    expect(preparer.ruleSetScripts()).toHaveLength(2 * MAX_RULE_SETS)
  })

  it('in the identity layout, keys the rules of an identity on one key, each with its field, and the rest on their own', () => {
    const preparer = chargePreparer(
      'tg',
      { serverTime: true, marginMs: 0 },
      { leaseMs: 10_000, owner: 1 },
      'identity',
    )
    const day = charge('day', fixedWindow({ limit: 1000, windowMs: 86_400_000 }))
    const second = charge('second', gcra({ rate: 10, periodMs: 1000, burst: 10 }))
    const [a, b] = [preparer.prepare(day, 0), preparer.prepare(second, 0)]
    expect([a.key, b.key]).toEqual(['tg:{ip:192.0.2.1}', 'tg:{ip:192.0.2.1}'])
    expect(a.tag).toBe('ip:192.0.2.1')
    // Different fields (before the carry argument), so different places: two states in one value.
    expect(a.args.at(-2)).not.toBe(b.args.at(-2))
    expect(a.place).not.toBe(b.place)
    expect(preparer.oneRuleScript(day)).not.toBe(preparer.oneRuleScript(second))
    // The same algorithm under another rule id: another field, another script.
    expect(preparer.oneRuleScript({ ...day, rule: 'day-2' })).not.toBe(preparer.oneRuleScript(day))
    const own = [
      charge('log', slidingLog({ limit: 5, windowMs: 1000 })),
      charge('slots', concurrency({ limit: 2 })),
      charge('fine', slidingWindow({ limit: 50, windowMs: 31_000, buckets: 31 })),
    ]
    for (const c of own) {
      const prepared = preparer.prepare(c, 0)
      expect(prepared.key).toBe(`tg:${c.rule}:{ip:192.0.2.1}`)
      expect(prepared.args.at(-2)).toBe('0')
    }
    // A sliding window of 30 sub-windows (249 bytes of state) still fits the value.
    const fits = charge('fits', slidingWindow({ limit: 50, windowMs: 30_000, buckets: 30 }))
    expect(preparer.prepare(fits, 0).key).toBe('tg:{ip:192.0.2.1}')
  })
})
