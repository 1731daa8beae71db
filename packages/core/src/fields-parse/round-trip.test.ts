import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { quotaPerSeconds } from '../http/policy-fields.js'
import { effectiveWindowSeconds, retryAfterSeconds } from '../http/rate-limit-headers.js'
import { createResponder, type ResponderOptions } from '../http/responder.js'
import { decision, verdict } from '../http/test-fixtures.js'
import type { RuleDecision } from '../limiter/types.js'
import { readRateLimitFields } from './read-fields.js'

/** A decision as the limiter makes them: a rate rule (burst ≠ quota) or a window rule. */
const ruleDecision = (id: string) =>
  fc
    .record({
      quota: fc.integer({ min: 1, max: 100_000 }),
      windowMs: fc.oneof(
        fc.integer({ min: 1, max: 86_400 }).map((s) => s * 1000),
        fc.integer({ min: 1, max: 100_000 }),
      ),
      burst: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
      allowed: fc.boolean(),
      remaining: fc.integer({ min: 0, max: 100_000 }),
      resetAfterMs: fc.integer({ min: 0, max: 10_000_000 }),
      retryAfterMs: fc.integer({ min: 0, max: 10_000_000 }),
    })
    .map(
      (f): RuleDecision =>
        decision(id, {
          policy: { quota: f.quota, windowMs: f.windowMs },
          limit: f.burst ?? f.quota,
          allowed: f.allowed,
          remaining: f.allowed ? Math.min(f.remaining, f.burst ?? f.quota) : 0,
          resetAfterMs: f.resetAfterMs,
          retryAfterMs: f.allowed ? undefined : f.retryAfterMs,
        }),
    )

const decisions = fc
  .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), { minLength: 1, maxLength: 4 })
  .chain((ids) => fc.tuple(...ids.map(ruleDecision)))
const now = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 })

function sendAndRead(options: ResponderOptions, list: RuleDecision[], at: number) {
  const v = verdict(list)
  const response = createResponder(options).respond(v, at)
  const headers = new Headers()
  for (const [name, value] of response.headers) headers.append(name, value)
  return { v, fields: readRateLimitFields(headers, at) }
}

describe('what Tollgate writes, read back', () => {
  it.each(['draft-8', 'draft-9', 'draft-10', 'draft-11'] as const)(
    '%s: every policy by name',
    (draft) => {
      fc.assert(
        fc.property(decisions, now, (list, at) => {
          const { v, fields } = sendAndRead({ standardHeaders: draft }, list, at)
          expect(fields.form).toBe('current')
          expect(fields.policies).toEqual(
            list.map((d) => {
              const { q, w } = quotaPerSeconds(d.policy.quota, d.policy.windowMs)
              return {
                name: d.rule,
                quota: q,
                windowMs: w * 1000,
                ...(d.limit === d.policy.quota ? {} : { burst: d.limit }),
                remaining: d.remaining,
                resetMs: effectiveWindowSeconds(d) * 1000,
              }
            }),
          )
          const retry = v.allowed ? undefined : retryAfterSeconds(v.deciding!.retryAfterMs) * 1000
          expect(fields.retryAfterMs).toBe(retry)
        }),
        { numRuns: 300 },
      )
    },
  )

  it.each(['draft-6', 'draft-7'] as const)('%s: the deciding policy', (draft) => {
    fc.assert(
      fc.property(decisions, now, (list, at) => {
        const { v, fields } = sendAndRead({ standardHeaders: draft }, list, at)
        const d = v.deciding!
        const { q, w } = quotaPerSeconds(d.policy.quota, d.policy.windowMs)
        expect(fields.form).toBe(draft)
        expect(fields.policies).toEqual([
          {
            name: '',
            quota: q,
            windowMs: w * 1000,
            ...(d.limit === d.policy.quota ? {} : { burst: d.limit }),
            limit: d.limit,
            remaining: d.remaining,
            resetMs: effectiveWindowSeconds(d) * 1000,
          },
        ])
      }),
      { numRuns: 300 },
    )
  })

  it.each(['epoch-seconds', 'delta-seconds'] as const)(
    'X-RateLimit-* with %s resets',
    (legacyReset) => {
      fc.assert(
        fc.property(decisions, now, (list, at) => {
          const { v, fields } = sendAndRead({ standardHeaders: false, legacyReset }, list, at)
          const d = v.deciding!
          // Epoch seconds are rounded up from `at`, so the wait read back is the reset rounded up
          // to the server's next whole second: at most 1 s longer than the reset, never shorter.
          const resetMs = fields.policies[0]!.resetMs!
          const exact = Math.ceil(d.resetAfterMs / 1000) * 1000
          if (legacyReset === 'delta-seconds') expect(resetMs).toBe(exact)
          else {
            expect(resetMs).toBeGreaterThanOrEqual(d.resetAfterMs)
            expect(resetMs).toBeLessThanOrEqual(d.resetAfterMs + 1000)
          }
          expect(fields.policies).toEqual([
            { name: '', limit: d.limit, remaining: d.remaining, resetMs },
          ])
        }),
        { numRuns: 300 },
      )
    },
  )
})

it('pk: each partition read back with the key Tollgate sent', async () => {
  const list = [
    decision('per-key', { key: 'api_key:k_1' }),
    decision('per-ip', { key: 'ip:203.0.113.7' }),
  ]
  const response = await createResponder({ partitionKey: true }).respondWithKeys(verdict(list), 0)
  const sentPolicy = new Map(response.headers).get('RateLimit-Policy')!
  const fields = readRateLimitFields(
    new Headers(response.headers.map(([name, value]) => [name, value])),
    0,
  )
  expect(fields.policies.map((p) => p.name)).toEqual(['per-key', 'per-ip'])
  for (const policy of fields.policies) {
    expect(policy.partitionKey).toMatch(/^[A-Za-z0-9+/]+=*$/)
    expect(sentPolicy).toContain(`"${policy.name}";q=100;w=60;pk=:${policy.partitionKey}:`)
  }
  expect(fields.policies[0]!.partitionKey).not.toBe(fields.policies[1]!.partitionKey)
})
