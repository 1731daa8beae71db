import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import type { RequestFacts } from '../limiter/types.js'
import type { RuleConfig } from '../rules/types.js'
import type { ObservedEvent } from './events.js'
import { onDecision } from './explain.js'
import { observedLimiter } from './observed-limiter.js'
import { shadowReport } from './shadow-report.js'

const facts: RequestFacts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }
const perIp = (limit: number, mode: 'enforce' | 'shadow' = 'enforce') =>
  ({
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit,
    window: '1m',
    mode,
  }) satisfies RuleConfig

function observed(rules: RuleConfig[]) {
  const events: ObservedEvent[] = []
  const warnings: string[] = []
  const limiter = observedLimiter({
    rules,
    clock: { now: () => 0 },
    logger: { warn: (line) => void warnings.push(line) },
    observers: [{ observe: (event) => void events.push(event) }],
  })
  const updates = () => events.filter((event) => event.type === 'rules.update')
  return { limiter, events, warnings, updates }
}

describe('update on an observed limiter', () => {
  it('applies a valid set, tells it as a rules.update event, and tells later events by the new rules', () => {
    const { limiter, events, updates } = observed([perIp(5)])
    expect(limiter.update!([perIp(50, 'shadow')])).toEqual({
      added: [],
      removed: [],
      changed: ['per-ip'],
      unchanged: [],
    })
    expect(updates()).toEqual([
      { type: 'rules.update', outcome: 'applied', rules: limiter.rules, reason: undefined },
    ])
    expect(limiter.rules[0]).toMatchObject({ id: 'per-ip', limit: 50, mode: 'shadow' })
    events.length = 0
    limiter.decide(facts)
    expect(events.find((event) => event.type === 'rule')).toMatchObject({
      rule: 'per-ip',
      mode: 'shadow',
      limit: 50,
    })
  })

  it('refuses an invalid set whole: thrown, logged, counted, and told as a refused rules.update', () => {
    const { limiter, updates, warnings } = observed([perIp(5)])
    const before = limiter.rules
    let thrown: unknown
    try {
      limiter.update!([{ ...perIp(5), limit: -1 }])
    } catch (error) {
      thrown = error
    }
    expect(isRateLimitError(thrown) && thrown.rule).toBe('per-ip')
    expect(limiter.updatesRefused).toBe(1)
    expect(limiter.rules).toBe(before)
    expect(updates()).toEqual([
      { type: 'rules.update', outcome: 'refused', rules: before, reason: 'ERR_RL_INVALID_RULE' },
    ])
    expect(warnings).toEqual([expect.stringMatching(/^\[tollgate\] WARN_RULES_UPDATE_REFUSED: /)])
  })

  it('refuses a concurrency or queue rule it was not made with, naming it (it follows their slots from start-up)', () => {
    const { limiter, updates } = observed([perIp(5)])
    const slots: RuleConfig = { id: 'slots', match: {}, algorithm: 'concurrency', limit: 4 }
    expect(() => limiter.update!([perIp(5), slots])).toThrow(
      /rule "slots": algorithm: a concurrency or queue rule this observed limiter was not made with/,
    )
    expect(updates()).toMatchObject([{ outcome: 'refused', reason: 'ERR_RL_INVALID_RULE' }])
    // One it was made with may change its other figures.
    const made = observed([perIp(5), slots])
    expect(made.limiter.update!([perIp(5), { ...slots, limit: 8 }])).toMatchObject({
      changed: ['slots'],
    })
  })

  it('keeps explanations and the shadow report in step with the new rules', () => {
    const explained: string[] = []
    const report = shadowReport()
    const limiter = observedLimiter({
      rules: [perIp(5)],
      clock: { now: () => 0 },
      observers: [
        onDecision((why) => explained.push(why.rules.map((r) => r.arithmetic).join())),
        report,
      ],
    })
    limiter.update!([perIp(50), { ...perIp(1, 'shadow'), id: 'trial' }])
    limiter.decide(facts)
    limiter.decide(facts)
    expect(explained.at(-1)).toMatch(/50/)
    expect(report.readRule('trial')).toMatchObject({ denied: 1 })
  })
})
