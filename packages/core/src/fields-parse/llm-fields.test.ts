import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { durationToMs, parseRfc3339 } from './llm-fields.js'
import { readRateLimitFields } from './read-fields.js'

const NOW = Date.UTC(2026, 11, 7, 6, 29, 0)
const read = (fields: Record<string, string>, now = NOW) =>
  readRateLimitFields(new Headers(fields), now)

describe('OpenAI: x-ratelimit-*-requests and -tokens', () => {
  it('gives a requests policy and a tokens policy, each in its unit', () => {
    const fields = read({
      'x-ratelimit-limit-requests': '5000',
      'x-ratelimit-limit-tokens': '160000',
      'x-ratelimit-remaining-requests': '4999',
      'x-ratelimit-remaining-tokens': '159976',
      'x-ratelimit-reset-requests': '12ms',
      'x-ratelimit-reset-tokens': '6m0s',
      'retry-after': '2',
    })
    expect(fields).toEqual({
      retryAfterMs: 2000,
      form: 'openai',
      policies: [
        { name: 'requests', quotaUnit: 'requests', limit: 5000, remaining: 4999, resetMs: 12 },
        {
          name: 'tokens',
          quotaUnit: 'tokens',
          limit: 160_000,
          remaining: 159_976,
          resetMs: 360_000,
        },
      ],
    })
  })

  it.each([
    ['1s', 1000],
    ['20ms', 20],
    ['6m0s', 360_000],
    ['1h2m3.5s', 3_723_500],
    ['2m59.56s', 179_560],
    ['1.1s', 1100], // not 1101: 1.1 × 1000 is 1100.0000000000002 in binary
    ['0s', 0],
    ['500µs', 1], // Go's micro sign, rounded up to a whole ms
    ['500μs', 1], // the Greek mu that looks like it
    ['1500us', 2],
    ['10ns', 1],
    ['7', 7000], // Azure OpenAI: a bare number of seconds
    ['0.25', 250],
    [' 1s ', 1000],
  ])('a reset of %j is %i ms', (value, ms) => {
    expect(durationToMs(value)).toBe(ms)
  })

  it.each(['', '-1s', '1e3s', '1d', 's', '1.s', '.5s', '1 s', '1s2', 'soon', '1m-1s', 'NaN'])(
    'a reset of %j is ignored',
    (value) => {
      expect(durationToMs(value)).toBeUndefined()
    },
  )

  it("ignores Azure OpenAI's -1 figures, and keeps the figures that parse", () => {
    const fields = read({
      'x-ratelimit-limit-tokens': '-1',
      'x-ratelimit-remaining-tokens': '-1',
      'x-ratelimit-reset-tokens': '0',
      'x-ratelimit-remaining-requests': '99',
    })
    expect(fields.policies).toEqual([
      { name: 'requests', quotaUnit: 'requests', remaining: 99 },
      { name: 'tokens', quotaUnit: 'tokens', resetMs: 0 },
    ])
  })

  it('is not mistaken for the single-valued X-RateLimit-* of GitHub', () => {
    expect(read({ 'x-ratelimit-remaining': '5' }).form).toBe('x-ratelimit')
    expect(read({ 'x-ratelimit-remaining-requests': '5' }).form).toBe('openai')
  })
})

describe('Anthropic: anthropic-ratelimit-*', () => {
  it('gives a policy per unit, its reset an RFC 3339 time', () => {
    const fields = read({
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': '2026-12-07T06:29:02Z',
      'anthropic-ratelimit-tokens-limit': '40000',
      'anthropic-ratelimit-tokens-remaining': '0',
      'anthropic-ratelimit-tokens-reset': '2026-12-07T06:30:00Z',
      'anthropic-ratelimit-input-tokens-limit': '40000',
      'anthropic-ratelimit-input-tokens-remaining': '39000',
      'anthropic-ratelimit-input-tokens-reset': '2026-12-07T06:29:01.5Z',
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': '0',
      'anthropic-ratelimit-output-tokens-reset': '2026-12-07T07:30:00+01:00',
      'retry-after': '60',
    })
    expect(fields.form).toBe('anthropic')
    expect(fields.retryAfterMs).toBe(60_000)
    expect(fields.policies).toEqual([
      { name: 'requests', quotaUnit: 'requests', limit: 50, remaining: 49, resetMs: 2000 },
      { name: 'tokens', quotaUnit: 'tokens', limit: 40_000, remaining: 0, resetMs: 60_000 },
      {
        name: 'input-tokens',
        quotaUnit: 'input-tokens',
        limit: 40_000,
        remaining: 39_000,
        resetMs: 1500,
      },
      {
        name: 'output-tokens',
        quotaUnit: 'output-tokens',
        limit: 8000,
        remaining: 0,
        resetMs: 60_000,
      },
    ])
  })

  it.each([
    ['2026-12-07T06:30:00Z', Date.UTC(2026, 11, 7, 6, 30, 0)],
    ['2026-12-07t06:30:00z', Date.UTC(2026, 11, 7, 6, 30, 0)],
    ['2026-12-07 06:30:00Z', Date.UTC(2026, 11, 7, 6, 30, 0)],
    ['2026-12-07T06:30:00.250Z', Date.UTC(2026, 11, 7, 6, 30, 0, 250)],
    ['2026-12-07T01:00:00-05:30', Date.UTC(2026, 11, 7, 6, 30, 0)],
    ['2016-12-31T23:59:60Z', Date.UTC(2017, 0, 1)], // a leap second
    ['0050-01-01T00:00:00Z', -60_589_296_000_000], // the year 50, not 1950
  ])('%j is %i', (text, ms) => {
    expect(parseRfc3339(text)).toBe(ms)
  })

  it.each([
    '2026-02-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-12-07T24:00:00Z',
    '2026-12-07T06:60:00Z',
    '2026-12-07T06:30:00', // no offset: local time of an unknown place
    '2026-12-07T06:30:00+24:00',
    '2026-12-07',
    'Mon, 07 Dec 2026 06:30:00 GMT',
    '1796624000',
  ])('%j is no RFC 3339 date-time', (text) => {
    expect(parseRfc3339(text)).toBeUndefined()
  })

  it('reads a reset already past as 0', () => {
    const fields = read({ 'anthropic-ratelimit-requests-reset': '2026-12-07T06:00:00Z' })
    expect(fields.policies).toEqual([{ name: 'requests', quotaUnit: 'requests', resetMs: 0 }])
  })
})

it('an RFC 3339 time and the ms it is read as agree for any instant', () => {
  fc.assert(
    fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 11, 31) }), (ms) => {
      expect(parseRfc3339(new Date(ms).toISOString())).toBe(ms)
    }),
    { numRuns: 2000 },
  )
})

it('a Go duration of whole units reads back as its ms', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 99 }),
      fc.integer({ min: 0, max: 59 }),
      fc.integer({ min: 0, max: 59 }),
      fc.integer({ min: 0, max: 999 }),
      (h, m, s, ms) => {
        const text = `${h}h${m}m${s}.${String(ms).padStart(3, '0')}s`
        expect(durationToMs(text)).toBe(((h * 60 + m) * 60 + s) * 1000 + ms)
      },
    ),
    { numRuns: 2000 },
  )
})
