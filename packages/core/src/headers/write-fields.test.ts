import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Verdict } from '../limiter/types.js'
import { createResponder, type ResponderOptions } from '../response/responder.js'
import { decision, verdict } from '../response/test-fixtures.js'
import { mergeFields } from './field-merge.js'

/** Every field `writeFields` writes, in order, as entries. */
function written(
  options: ResponderOptions,
  v: Verdict,
  now: number,
  responder = createResponder(options),
): Array<[string, string]> {
  const fields: Array<[string, string]> = []
  // Fields are written as of when the request is served: at its decision, `at`.
  responder.writeFields(
    { ...v, at: now, waitMs: undefined },
    {
      write: (name, value) => fields.push([name, value]),
    },
  )
  return fields
}

const OPTIONS: ResponderOptions[] = [
  {},
  { exposeHeaders: true },
  { legacyReset: 'delta-seconds' },
  { legacyHeaders: false },
  { standardHeaders: false },
  { standardHeaders: 'draft-6' },
  { standardHeaders: 'draft-7', exposeHeaders: true },
  { standardHeaders: 'draft-12', shadowPolicies: true, exposeHeaders: true },
  { shadowPolicies: true },
  { legacyHeaders: false, standardHeaders: false, exposeHeaders: true },
]

const shadow = decision('shadow', { mode: 'shadow', remaining: 3 })
const VERDICTS: Verdict[] = [
  verdict([decision('api', { remaining: 42, resetAfterMs: 12_500 })]),
  verdict([decision('api', { remaining: 0, resetAfterMs: 0 })]),
  verdict([decision('api', { policy: { quota: 10, windowMs: 1000 }, limit: 20 })]),
  verdict([decision('a', { remaining: 7 }), decision('b', { remaining: 3 })]),
  verdict([decision('api'), shadow]),
  verdict([shadow]),
  verdict([]),
  verdict([], 'limit', { storeFailed: true }),
]

describe('writeFields', () => {
  it('merges its fields with another middleware’s as mergeFields does, knowing only its groups', () => {
    const denied = verdict([decision('api', { allowed: false, retryAfterMs: 30_000 })])
    for (const ours of OPTIONS) {
      const { writeFields } = createResponder({ ...ours, legacyHeaders: true })
      for (const theirs of OPTIONS) {
        for (const other of [VERDICTS[0]!, VERDICTS[3]!, denied]) {
          const existing = new Map(
            createResponder({ ...theirs, legacyHeaders: true })
              .respond(other, 0)
              .headers.map(([name, value]) => [name.toLowerCase(), value]),
          )
          const read = (name: string) => existing.get(name)
          for (const v of [...VERDICTS, denied]) {
            const entries = createResponder({ ...ours, legacyHeaders: true }).respond(v, 0).headers
            expect(writeFields.merge(entries, read)).toEqual(mergeFields(entries, read))
          }
        }
      }
    }
  })

  it('writes the entries of an admitted response, in order, for every field option', () => {
    for (const options of OPTIONS) {
      for (const v of VERDICTS) {
        for (const now of [0, 1_700_000_000_123]) {
          const { headers } = createResponder(options).respond(v, now)
          expect(written(options, v, now)).toEqual(headers)
        }
      }
    }
  })
})

describe('writeFields with partition keys', () => {
  it('writes the entries of an admitted response, pk included', () => {
    // Only the current RateLimit fields carry a `pk` (the others refuse a partition key).
    const carrying = OPTIONS.filter((o) => o.standardHeaders === undefined)
    expect(carrying.length).toBeGreaterThan(3)
    for (const base of carrying) {
      const options = { ...base, partitionKey: true }
      const responder = createResponder(options)
      for (const v of VERDICTS) {
        for (const now of [0, 1_700_000_000_123]) {
          const built = responder.respond(v, now)
          expect(written(options, v, now, responder)).toEqual(built.headers)
          const listed = v.decisions.some((d) => d.mode === 'enforce' || base.shadowPolicies)
          if (base.standardHeaders !== false && listed) {
            expect(built.headers.map((entry) => entry[1]).join()).toContain('pk=')
          }
        }
      }
    }
  })
})

describe('fields over generated verdicts', () => {
  const rule = fc.constantFrom('api', 'burst', 'ünïcode', 'a"b')
  const decisionArb = fc
    .record({
      rule,
      mode: fc.constantFrom('enforce', 'shadow') as fc.Arbitrary<'enforce' | 'shadow'>,
      allowed: fc.boolean(),
      remaining: fc.nat(1000),
      quota: fc.constantFrom(10, 100, 1000),
      windowMs: fc.constantFrom(100, 1000, 60_000, 1500),
      burst: fc.nat(50),
      resetAfterMs: fc.nat(120_000),
      retryAfterMs: fc.option(fc.nat(120_000), { nil: undefined }),
      key: fc.string({ unit: 'grapheme', maxLength: 12 }),
    })
    .map((d) =>
      decision(d.rule, {
        mode: d.mode,
        allowed: d.allowed,
        remaining: d.allowed ? d.remaining : 0,
        policy: { quota: d.quota, windowMs: d.windowMs },
        limit: d.quota + d.burst,
        resetAfterMs: d.resetAfterMs,
        retryAfterMs: d.allowed ? undefined : d.retryAfterMs,
        key: d.key,
      }),
    )
  // One decision per rule, as the limiter gives.
  const verdictArb = fc
    .uniqueArray(decisionArb, { maxLength: 4, selector: (d) => d.rule })
    .map((decisions) => verdict(decisions))
  const carrying = OPTIONS.filter((o) => o.standardHeaders === undefined)
  const now = fc.integer({ min: 0, max: 2_000_000_000_000 })

  it('writes what respond answers, pk included, for every field option', () => {
    fc.assert(
      fc.property(fc.constantFrom(...carrying), verdictArb, now, (base, v, at) => {
        const options = { ...base, partitionKey: true }
        const responder = createResponder(options)
        const built = responder.respond(v, at)
        if (built.allowed) expect(written(options, v, at, responder)).toEqual(built.headers)
      }),
    )
  })

  it('a responder that has answered others answers each verdict as a fresh one does', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...OPTIONS, ...carrying.map((o) => ({ ...o, partitionKey: true }))),
        fc.array(fc.tuple(verdictArb, now), { minLength: 1, maxLength: 12 }),
        (options, answers) => {
          const longLived = createResponder(options)
          for (const [v, at] of answers) {
            expect(longLived.respond(v, at)).toEqual(createResponder(options).respond(v, at))
          }
        },
      ),
    )
  })
})
