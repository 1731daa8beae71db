import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { observedLimiter } from './observed-limiter.js'
import { shadowReport } from './shadow-report.js'

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 100, window: '1m' },
  {
    id: 'strict',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 2,
    window: '1m',
    mode: 'shadow',
  },
]

const from = (ip: string) => ({ method: 'GET', path: '/', identities: { ip } })

describe('shadowReport', () => {
  it('reports whom a shadow rule would have hit, per interval, first and last seen', () => {
    const report = shadowReport({ capacity: 2, intervalMs: 60_000, intervals: 3 })
    const limiter = observedLimiter({ rules: RULES, observers: [report] })
    const send = (ip: string, times: number, now: number) => {
      for (let i = 0; i < times; i++) limiter.decide(from(ip), { now })
    }
    // Minute 0: a sends 5 (3 over), b 3 (1 over), c 1 (none over).
    send('a', 5, 1_000)
    send('b', 3, 2_000)
    send('c', 1, 3_000)
    // Minute 1: c sends 4 (2 over).
    send('c', 4, 61_000)
    const strict = report.readRule('strict')!
    expect(strict).toMatchObject({ rule: 'strict', denied: 6, firstSeen: 1_000, lastSeen: 61_000 })
    expect(strict.intervals).toEqual([
      { start: 0, denied: 4 },
      { start: 60_000, denied: 2 },
    ])
    // Two keys fit: c replaced b (1) and inherits its count as error.
    expect(strict.heaviest).toEqual([
      { key: 'ip:a', count: 3, error: 0, firstSeen: 1_000, lastSeen: 1_000 },
      { key: 'ip:c', count: 3, error: 1, firstSeen: 61_000, lastSeen: 61_000 },
    ])
    expect(strict.errorBound).toBe(3)
    expect(report.readRule('per-ip')).toBeUndefined()
    expect(report.read().map((rule) => rule.rule)).toEqual(['strict'])
  })

  it('keeps only the latest intervals', () => {
    const report = shadowReport({ intervalMs: 60_000, intervals: 2 })
    const limiter = observedLimiter({ rules: RULES, observers: [report] })
    // Three requests at the start of minutes 0, 1, 2 and 5: one over the limit each time.
    for (const minute of [0, 1, 2, 5]) {
      for (let i = 0; i < 3; i++) limiter.decide(from('a'), { now: minute * 60_000 })
    }
    const strict = report.readRule('strict')!
    expect(strict.denied).toBe(4)
    // Two intervals kept: minutes 4 and 5, of which only 5 had denials.
    expect(strict.intervals).toEqual([{ start: 300_000, denied: 1 }])
  })

  it('refuses options that are not whole numbers ≥ 1, naming them', () => {
    expect(() => shadowReport({ capacity: 0 })).toThrow('shadowReport(): capacity')
    expect(() => shadowReport({ intervalMs: 1.5 })).toThrow('shadowReport(): intervalMs')
  })
})
