import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Verdict } from '../limiter/types.js'
import type { RuleConfig } from '../rules/types.js'
import { debugHeader } from './debug-header.js'
import { explain, onDecision } from './explain.js'
import { observedLimiter } from './observed-limiter.js'
import { displayKey } from './redact.js'

const RULES: RuleConfig[] = [
  {
    id: 'per-key',
    match: { identity: 'api_key', route: ['/v1/*'] },
    algorithm: 'token_bucket',
    rate: 10,
    period: '1s',
    burst: 2,
  },
  {
    id: 'login',
    match: { identity: 'ip', method: ['POST'] },
    algorithm: 'fixed_window',
    limit: 1,
    window: '1m',
  },
]

const limiter = () => createLimiter({ rules: RULES, logger: false })
const call = (identities: Record<string, string>, method = 'GET') => ({
  method,
  path: '/v1/labels',
  identities,
})

describe('explain', () => {
  it('says which rules matched and why, the identity and key each used, and the arithmetic', () => {
    const l = limiter()
    l.decide(call({ api_key: 'k_123', ip: '203.0.113.7' }), { now: 0 })
    l.decide(call({ api_key: 'k_123', ip: '203.0.113.7' }), { now: 0 })
    const denied = l.decide(call({ api_key: 'k_123', ip: '203.0.113.7' }), { now: 0 }) as Verdict
    const why = explain(denied, l.rules)
    expect(why).toMatchObject({ allowed: false, reason: 'limit', deciding: 'per-key' })
    expect(why.rules).toHaveLength(1)
    const rule = why.rules[0]!
    expect(rule).toMatchObject({
      rule: 'per-key',
      outcome: 'denied',
      matched: 'route /v1/*',
      keysOn: ['api_key'],
      usedIdentity: ['api_key'],
      charged: 0,
      remaining: 0,
      limit: 2,
      retryAfterMs: 100,
    })
    expect(rule.key).toMatch(/^api_key:#[0-9a-f]{8}$/)
    expect(rule.arithmetic).toBe(
      'token_bucket: burst 2, 10 per 1000 ms, so one unit refills every 100 ms; needs 1, has 0 whole: the missing 1 (less the part already accrued) take 100 ms at 100 ms each; full again in 200 ms = 2 units x 100 ms, less the part accrued',
    )
  })

  it('shows a fallback to the IP, and a rule that admitted a request another denied', () => {
    const l = limiter()
    l.decide(call({ ip: '203.0.113.7' }, 'POST'), { now: 0 })
    const denied = l.decide(call({ ip: '203.0.113.7' }, 'POST'), { now: 0 }) as Verdict
    const [perKey, login] = explain(denied, l.rules, { keys: 'redacted' }).rules
    expect(perKey).toMatchObject({
      keysOn: ['api_key'],
      usedIdentity: ['ip'],
      key: 'ip:***',
      outcome: 'admitted',
      charged: 0,
    })
    expect(perKey!.arithmetic).toMatch(/nothing was taken: another rule denied the request$/)
    expect(login).toMatchObject({ outcome: 'denied', matched: 'method POST', retryAfterMs: 60_000 })
    expect(login!.arithmetic).toBe(
      'fixed_window: 1 per 60000 ms; needs 1, 0 left of 1: retry after 60000 ms, when the window ends; back to 1 in 60000 ms',
    )
  })

  it('never shows a key unless revealed, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.constantFrom('ip', 'api_key'), (value, name) => {
        const key = `${name}:${value}`
        for (const display of ['hashed', 'redacted'] as const) {
          const shown = displayKey(key, display)!
          expect(shown.startsWith(`${name}:`)).toBe(true)
          expect(shown.slice(name.length + 1)).toMatch(/^(#[0-9a-f]{8}|\*\*\*)$/)
        }
        expect(displayKey(key, 'revealed')).toBe(key)
      }),
    )
  })

  it('names every identity of a key built from several, whatever their values hold', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (account, ip) => {
        const key = `account#${account.length}:${account}&ip#${ip.length}:${ip}`
        expect(displayKey(key, 'redacted')).toBe('account&ip:***')
      }),
    )
  })

  it('is handed to an onDecision hook for every request', () => {
    const seen: string[] = []
    const l = observedLimiter({
      rules: RULES,
      observers: [onDecision((why) => seen.push(`${why.allowed} ${why.rules.map((r) => r.rule)}`))],
    })
    l.decide(call({ api_key: 'k' }), { now: 0 })
    l.decide({ method: 'GET', path: '/other', identities: {} }, { now: 0 })
    expect(seen).toEqual(['true per-key', 'true '])
  })
})

describe('debugHeader', () => {
  it('is off unless the environment is exactly development', () => {
    const warnings: string[] = []
    const logger = { warn: (line: string) => warnings.push(line) }
    for (const environment of [undefined, '', 'production', 'test', 'Development', 'dev']) {
      expect(debugHeader(limiter(), { environment, logger })).toBeUndefined()
    }
    expect(warnings).toEqual([])
    expect(debugHeader(limiter(), { environment: 'development', logger })).toBeTypeOf('function')
    expect(warnings).toEqual([
      '[tollgate] WARN_DEBUG_HEADER_ON: every response explains its verdict in Tollgate-Debug (the environment is development)',
    ])
  })

  it('explains each rule in printable ASCII, with the key hashed', () => {
    const l = limiter()
    const write = debugHeader(l, { environment: 'development', logger: false })!
    const value = write(
      l.decide(call({ api_key: 'k_ü"1', ip: '203.0.113.7' }, 'POST'), { now: 0 }) as Verdict,
    )
    expect(value).toMatch(
      /^per-key;admitted;remaining=1\/2;key="api_key:#[0-9a-f]{8}";why="[^"]+", login;admitted;remaining=0\/1;key="ip:#[0-9a-f]{8}";why="[^"]+"$/,
    )
    expect(value).not.toContain('203.0.113.7')
    expect(value).not.toContain('k_')
  })
})
