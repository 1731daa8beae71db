import { type Charge, fixedWindow, gcra } from '@tollgate/core'
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
})
