import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { parseDictionary, parseItem, parseList } from 'structured-headers'
import { describe, expect, it } from 'vitest'
import { readRateLimitFields } from '../fields-parse/read-fields.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Verdict } from '../limiter/types.js'
import { createResponder, type ResponderOptions } from '../response/responder.js'
import { decision, type Sent, sent, verdict } from '../response/test-fixtures.js'

/** A decision of a rule whose figures the test sets; defaults: an allowed 100 per 60 s window. */
function headersOf(v: Verdict, options: ResponderOptions = {}, now = 0): Sent {
  return sent(createResponder(options).respond(v, now).headers)
}

const members = (value: string) => parseList(value).map(([v, p]) => [v, Object.fromEntries(p)])

describe('current form (draft-8 to draft-11), checked against the drafts’ examples', () => {
  it('draft-11 §3.2: RateLimit-Policy: "default";q=100;w=10', () => {
    const v = verdict([decision('default', { policy: { quota: 100, windowMs: 10_000 } })])
    expect(headersOf(v)['RateLimit-Policy']).toBe('"default";q=100;w=10')
  })

  it('draft-11 §3.2: RateLimit-Policy: "permin";q=50;w=60,"perhr";q=1000;w=3600 (same list)', () => {
    const v = verdict([
      decision('permin', { policy: { quota: 50, windowMs: 60_000 } }),
      decision('perhr', { policy: { quota: 1000, windowMs: 3_600_000 } }),
    ])
    const sent = headersOf(v)['RateLimit-Policy']!
    // We separate members with ", " as RFC 9651 serializes; the draft wrote ","; the parsed lists agree.
    expect(sent).toBe('"permin";q=50;w=60, "perhr";q=1000;w=3600')
    expect(members(sent)).toEqual(members('"permin";q=50;w=60,"perhr";q=1000;w=3600'))
  })

  it('draft-11 §4.2: RateLimit: "default";r=50;t=30', () => {
    const v = verdict([decision('default', { remaining: 50, resetAfterMs: 30_000 })])
    expect(headersOf(v).RateLimit).toBe('"default";r=50;t=30')
  })

  it('draft-11 B.2.1: RateLimit: "fixedwindow";r=99;t=50 with RateLimit-Policy: "fixedwindow";q=100;w=60, through the real limiter', async () => {
    const limiter = createLimiter({
      rules: [
        {
          id: 'fixedwindow',
          algorithm: 'fixed_window',
          limit: 100,
          window: '60s',
          match: { identity: 'ip' },
        },
      ],
    })
    // One request 10 s into a 60 s window: 99 left, 50 s to go.
    const v = await limiter.decide(
      { method: 'GET', path: '/items/123', identities: { ip: '192.0.2.1' } },
      { now: 10_000 },
    )
    const headers = headersOf(v)
    expect(headers.RateLimit).toBe('"fixedwindow";r=99;t=50')
    expect(headers['RateLimit-Policy']).toBe('"fixedwindow";q=100;w=60')
  })

  it('draft-11 B.1.4: a throttled response carries RateLimit: "default";r=0;t=5, Retry-After naming the same moment, and the quota-exceeded problem', () => {
    const v = verdict([
      decision('default', { allowed: false, remaining: 0, resetAfterMs: 5000, retryAfterMs: 5000 }),
    ])
    const response = createResponder().respond(v, 0)
    const headers = sent(response.headers)
    expect(response.status).toBe(429)
    expect(headers.RateLimit).toBe('"default";r=0;t=5')
    expect(headers['Retry-After']).toBe('5')
    expect(headers['Content-Type']).toBe('application/problem+json')
    expect(JSON.parse(response.body!)).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      status: 429,
      'violated-policies': ['default'],
    })
  })

  it('draft-11 B.3.1: RateLimit-Policy: "hour";q=1000;w=3600, "day";q=5000;w=86400 and the "day";r=100;t=36000 member', () => {
    const v = verdict([
      decision('hour', {
        policy: { quota: 1000, windowMs: 3_600_000 },
        remaining: 900,
        resetAfterMs: 1_800_000,
      }),
      decision('day', {
        policy: { quota: 5000, windowMs: 86_400_000 },
        remaining: 100,
        resetAfterMs: 36_000_000,
      }),
    ])
    const headers = headersOf(v)
    expect(headers['RateLimit-Policy']).toBe('"hour";q=1000;w=3600, "day";q=5000;w=86400')
    expect(headers.RateLimit).toBe('"hour";r=900;t=1800, "day";r=100;t=36000')
  })

  it('draft-11 §3.2: "peruser";q=100;w=60;pk=:…: (partition key as a byte sequence of the hashed key)', () => {
    const v = verdict([
      decision('peruser', { key: 'user:u_42', remaining: 10, resetAfterMs: 7000 }),
    ])
    const responder = createResponder({ partitionKey: true })
    const headers = sent(responder.respond(v, 0).headers)
    const expected = createHash('sha256').update('user:u_42').digest().subarray(0, 12)
    const pk = `:${expected.toString('base64')}:`
    expect(headers['RateLimit-Policy']).toBe(`"peruser";q=100;w=60;pk=${pk}`)
    expect(headers.RateLimit).toBe(`"peruser";r=10;t=7;pk=${pk}`)
    const [, params] = parseList(headers.RateLimit!)[0]!
    expect(Buffer.from(params.get('pk') as ArrayBuffer)).toEqual(expected)
    // The draft's own example value parses the same way (a byte sequence).
    expect(parseList('"peruser";q=100;w=60;pk=:cHsdsRa894==:')[0]![1].get('pk')).toBeInstanceOf(
      ArrayBuffer,
    )
  })

  it('every value parses as an RFC 9651 List of String items with Integer parameters', () => {
    const v = verdict([
      decision('api', {
        policy: { quota: 10, windowMs: 1000 },
        limit: 20,
        remaining: 7,
        resetAfterMs: 1300,
      }),
      decision('daily', {
        policy: { quota: 10_000, windowMs: 86_400_000 },
        remaining: 9000,
        resetAfterMs: 4_000_000,
      }),
    ])
    const headers = headersOf(v)
    expect(members(headers['RateLimit-Policy']!)).toEqual([
      // Drafts 8–11 §3.1: an extension parameter carries a vendor prefix.
      ['api', { q: 10, w: 1, 'tollgate-burst': 20 }],
      ['daily', { q: 10_000, w: 86_400 }],
    ])
    expect(members(headers.RateLimit!)).toEqual([
      ['api', { r: 7, t: 2 }],
      ['daily', { r: 9000, t: 4000 }],
    ])
  })
})

describe('draft-12: a, w and c on RateLimit, RateLimit-Policy unchanged', () => {
  const draft12 = { standardHeaders: 'draft-12' } as const

  it('the rename’s own example: RateLimit-Policy: "burst";q=100;w=60 with RateLimit: "burst";a=80;w=45 (and the request’s cost)', () => {
    const v = verdict([
      decision('burst', {
        policy: { quota: 100, windowMs: 60_000 },
        remaining: 80,
        resetAfterMs: 45_000,
      }),
    ])
    const headers = headersOf(v, draft12)
    expect(headers['RateLimit-Policy']).toBe('"burst";q=100;w=60')
    expect(headers.RateLimit).toBe('"burst";a=80;w=45;c=1')
    expect(members(headers.RateLimit!)).toEqual([['burst', { a: 80, w: 45, c: 1 }]])
  })

  it('B.2.1’s fixed window in draft-12 form, through the real limiter: "fixedwindow";a=99;w=50;c=1', async () => {
    const limiter = createLimiter({
      rules: [
        {
          id: 'fixedwindow',
          algorithm: 'fixed_window',
          limit: 100,
          window: '60s',
          match: { identity: 'ip' },
        },
      ],
    })
    const v = await limiter.decide(
      { method: 'GET', path: '/items/123', identities: { ip: '192.0.2.1' } },
      { now: 10_000 },
    )
    const headers = headersOf(v, draft12)
    expect(headers.RateLimit).toBe('"fixedwindow";a=99;w=50;c=1')
    expect(headers['RateLimit-Policy']).toBe('"fixedwindow";q=100;w=60')
  })

  it('c is what each rule counted of an admitted request, and absent from a refused one (it took nothing)', () => {
    const tokens = decision('tokens', { cost: 250, remaining: 750, resetAfterMs: 15_000 })
    const admitted = verdict([tokens, decision('requests', { remaining: 9, resetAfterMs: 1000 })])
    expect(headersOf(admitted, draft12).RateLimit).toBe(
      '"tokens";a=750;w=15;c=250, "requests";a=9;w=1;c=1',
    )
    const refused = verdict([
      tokens,
      decision('requests', {
        allowed: false,
        remaining: 0,
        resetAfterMs: 5000,
        retryAfterMs: 5000,
      }),
    ])
    const response = createResponder(draft12).respond(refused, 0)
    const headers = sent(response.headers)
    expect(response.status).toBe(429)
    expect(headers.RateLimit).toBe('"tokens";a=750;w=15, "requests";a=0;w=5')
    expect(headers['Retry-After']).toBe('5')
  })

  it('a shadow rule that would have refused has no c; one that admits has its cost', () => {
    const v = verdict([
      decision('api', { remaining: 5, resetAfterMs: 1000 }),
      decision('trial', { mode: 'shadow', allowed: false, remaining: 0, retryAfterMs: 2000 }),
      decision('wide', { mode: 'shadow', cost: 3, remaining: 40, resetAfterMs: 1000 }),
    ])
    expect(headersOf(v, { ...draft12, shadowPolicies: true }).RateLimit).toBe(
      '"api";a=5;w=1;c=1, "trial";a=0;w=2, "wide";a=40;w=1;c=3',
    )
  })

  it('a concurrency rule: qu in the policy, no effective window while admitted', () => {
    const slots = { quota: 4, windowMs: 0, unit: 'concurrent-requests' } as const
    const v = verdict([decision('slots', { policy: slots, limit: 4, remaining: 3 })])
    const headers = headersOf(v, draft12)
    expect(headers['RateLimit-Policy']).toBe('"slots";q=4;qu="concurrent-requests"')
    expect(headers.RateLimit).toBe('"slots";a=3;c=1')
  })

  it('pk as in drafts 8 to 11: the hashed key, on both fields', () => {
    const v = verdict([
      decision('peruser', { key: 'user:u_42', remaining: 10, resetAfterMs: 7000 }),
    ])
    const headers = sent(createResponder({ ...draft12, partitionKey: true }).respond(v, 0).headers)
    const expected = createHash('sha256').update('user:u_42').digest().subarray(0, 12)
    const pk = `:${expected.toString('base64')}:`
    expect(headers['RateLimit-Policy']).toBe(`"peruser";q=100;w=60;pk=${pk}`)
    expect(headers.RateLimit).toBe(`"peruser";a=10;w=7;pk=${pk};c=1`)
  })

  it('reads back, through the client’s reader, as the decisions written (any figures, any cost)', () => {
    const ruleDecision = fc
      .record({
        allowed: fc.boolean(),
        quota: fc.integer({ min: 1, max: 10_000 }),
        windowS: fc.integer({ min: 1, max: 86_400 }),
        remaining: fc.integer({ min: 0, max: 10_000 }),
        resetAfterMs: fc.integer({ min: 0, max: 86_400_000 }),
        retryAfterMs: fc.integer({ min: 1, max: 86_400_000 }),
        cost: fc.integer({ min: 0, max: 1_000_000 }),
      })
      .map((f) => ({
        ...f,
        remaining: f.allowed ? f.remaining : 0,
        retryAfterMs: f.allowed ? undefined : f.retryAfterMs,
      }))
    fc.assert(
      fc.property(fc.array(ruleDecision, { minLength: 1, maxLength: 4 }), (figures) => {
        const decisions = figures.map((f, i) =>
          decision(`rule-${i}`, { ...f, policy: { quota: f.quota, windowMs: f.windowS * 1000 } }),
        )
        const headers = createResponder(draft12).respond(verdict(decisions), 0).headers
        const read = readRateLimitFields(new Headers(headers as Array<[string, string]>), 0)
        expect(read.form).toBe('current')
        expect(read.policies).toEqual(
          figures.map((f, i) => ({
            name: `rule-${i}`,
            quota: f.quota,
            windowMs: f.windowS * 1000,
            remaining: f.remaining,
            resetMs: f.allowed
              ? Math.ceil(f.resetAfterMs / 1000) * 1000
              : Math.ceil(f.retryAfterMs! / 1000) * 1000,
            ...(f.allowed && figures.every((g) => g.allowed) ? { cost: f.cost } : {}),
          })),
        )
      }),
      { numRuns: 300 },
    )
  })

  it('draft-11 stays the default, and writes no a, w or c on RateLimit', () => {
    const v = verdict([decision('default', { remaining: 50, resetAfterMs: 30_000 })])
    expect(headersOf(v).RateLimit).toBe('"default";r=50;t=30')
  })
})

describe('draft-7 and draft-6, checked against draft-07’s examples', () => {
  const example = verdict([
    decision('default', {
      policy: { quota: 100, windowMs: 10_000 },
      remaining: 50,
      resetAfterMs: 5000,
    }),
  ])

  it('draft-07 §3.5: RateLimit-Policy: 100;w=10 with RateLimit: limit=100, remaining=50, reset=5', () => {
    const headers = headersOf(example, { standardHeaders: 'draft-7' })
    expect(headers['RateLimit-Policy']).toBe('100;w=10')
    expect(headers.RateLimit).toBe('limit=100, remaining=50, reset=5')
    const dictionary = parseDictionary(headers.RateLimit!)
    expect([...dictionary].map(([k, [v]]) => [k, v])).toEqual([
      ['limit', 100],
      ['remaining', 50],
      ['reset', 5],
    ])
  })

  it('draft-07 §5: RateLimit: limit=10, remaining=1, reset=7', () => {
    const v = verdict([
      decision('d', { policy: { quota: 10, windowMs: 10_000 }, remaining: 1, resetAfterMs: 6001 }),
    ])
    expect(headersOf(v, { standardHeaders: 'draft-7' }).RateLimit).toBe(
      'limit=10, remaining=1, reset=7',
    )
  })

  it('draft-07 §2.3: a rate rule’s burst as a parameter, 12;w=1;burst=1000', () => {
    const v = verdict([
      decision('leaky', { policy: { quota: 12, windowMs: 1000 }, limit: 1000, remaining: 999 }),
    ])
    expect(headersOf(v, { standardHeaders: 'draft-7' })['RateLimit-Policy']).toBe(
      '12;w=1;burst=1000',
    )
  })

  it('draft-6: the same figures as RateLimit-Limit, -Remaining, -Reset (Integer items) and RateLimit-Policy', () => {
    const headers = headersOf(example, { standardHeaders: 'draft-6' })
    expect(headers).toMatchObject({
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '50',
      'RateLimit-Reset': '5',
      'RateLimit-Policy': '100;w=10',
    })
    for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
      expect(typeof parseItem(headers[name]!)[0]).toBe('number')
    }
    expect(headers.RateLimit).toBeUndefined()
  })

  it('single-valued fields describe the deciding rule, not the first', () => {
    const loose = decision('loose', { remaining: 90 })
    const tight = decision('tight', {
      policy: { quota: 10, windowMs: 1000 },
      remaining: 2,
      resetAfterMs: 800,
    })
    const headers = headersOf(
      verdict([loose, tight]),
      { standardHeaders: 'draft-7', legacyHeaders: true },
      1_000_000,
    )
    expect(headers.RateLimit).toBe('limit=10, remaining=2, reset=1')
    expect(headers['X-RateLimit-Remaining']).toBe('2')
    expect(headers['X-RateLimit-Reset']).toBe('1001')
  })
})
