import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'
import type { Limiter, Verdict } from './types.js'

const at = { now: 1_000_000 }
const facts = (ip: string, path = '/reports') => ({ method: 'GET', path, identities: { ip } })

function limiterOf(rules: RuleConfig[]): Limiter {
  return createLimiter({ rules, logger: false })
}

/** Slots in use under `rule` for `key` (a cost of 0 only inspects). */
function held(limiter: Limiter, rule: string, key: string, limit: number): number {
  const decision = limiter.check(key, rule, { cost: 0, ...at }) as { remaining: number }
  return limit - decision.remaining
}

describe('release', () => {
  it('keeps at most limit requests in flight per key, whatever order they end in', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(
          fc.record({ client: fc.constantFrom('a', 'b'), end: fc.boolean(), pick: fc.nat() }),
        ),
        (limit, steps) => {
          const limiter = limiterOf([
            { id: 'c', match: { identity: 'ip' }, algorithm: 'concurrency', limit },
          ])
          const inFlight: Record<string, Verdict[]> = { a: [], b: [] }
          for (const step of steps) {
            const flying = inFlight[step.client]!
            if (step.end && flying.length > 0) {
              const [verdict] = flying.splice(step.pick % flying.length, 1)
              limiter.release!(verdict!, at)
              // Twice changes nothing.
              limiter.release!(verdict!, at)
            } else {
              const verdict = limiter.decide(facts(step.client), at) as Verdict
              expect(verdict.allowed).toBe(flying.length < limit)
              if (verdict.allowed) flying.push(verdict)
            }
            for (const client of ['a', 'b']) {
              expect(held(limiter, 'c', `ip:${client}`, limit)).toBe(inFlight[client]!.length)
            }
          }
        },
      ),
    )
  })

  it('gives back slots only, and refund everything but slots', () => {
    const limiter = limiterOf([
      { id: 'c', match: {}, algorithm: 'concurrency', limit: 2 },
      {
        id: 'tb',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '1h',
        burst: 5,
      },
    ])
    const verdict = limiter.decide(facts('a'), at) as Verdict
    expect(verdict.allowed).toBe(true)
    expect(verdict.decisions.find((d) => d.rule === 'c')?.key).toBe('*')
    limiter.refund(verdict, at)
    expect(held(limiter, 'c', '*', 2)).toBe(1)
    expect(limiter.check('ip:a', 'tb', { cost: 0, ...at })).toMatchObject({ remaining: 5 })
    limiter.release!(verdict, at)
    expect(held(limiter, 'c', '*', 2)).toBe(0)
    expect(limiter.check('ip:a', 'tb', { cost: 0, ...at })).toMatchObject({ remaining: 5 })
  })

  it('takes no slot for a request another rule denies, and nothing is given back for it', () => {
    const limiter = limiterOf([
      { id: 'c', match: {}, algorithm: 'concurrency', limit: 2 },
      {
        id: 'tb',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '1h',
        burst: 1,
      },
    ])
    const first = limiter.decide(facts('a'), at) as Verdict
    const denied = limiter.decide(facts('a'), at) as Verdict
    expect(denied.allowed).toBe(false)
    expect(held(limiter, 'c', '*', 2)).toBe(1)
    limiter.release!(denied, at)
    expect(held(limiter, 'c', '*', 2)).toBe(1)
    limiter.release!(first, at)
    expect(held(limiter, 'c', '*', 2)).toBe(0)
  })

  it('counts a shadow rule without refusing, and releases what it counted', () => {
    const limiter = limiterOf([
      { id: 'c', match: {}, algorithm: 'concurrency', limit: 1, mode: 'shadow' },
    ])
    const first = limiter.decide(facts('a'), at) as Verdict
    const second = limiter.decide(facts('b'), at) as Verdict
    expect(second.allowed).toBe(true)
    expect(second.shadowDenied.map((d) => d.rule)).toEqual(['c'])
    limiter.release!(second, at)
    expect(held(limiter, 'c', '*', 1)).toBe(1)
    limiter.release!(first, at)
    expect(held(limiter, 'c', '*', 1)).toBe(0)
  })
})
