import { describe, expect, it } from 'vitest'
import { readRateLimitFields } from './read-fields.js'

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0)
const read = (fields: Record<string, string>, now = NOW) =>
  readRateLimitFields(new Headers(fields), now)

describe('Retry-After', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7000], // the field line's OWS is no part of the value
    ['\t007', 7000],
    ['Thu, 15 Jan 2026 12:00:30 GMT', 30_000],
    ['Thursday, 15-Jan-26 12:01:00 GMT', 60_000],
    ['Thu Jan 15 12:00:05 2026', 5000],
    ['Thu Jan  1 00:00:00 2026', 0], // already past
  ])('%j is a wait of %i ms', (value, ms) => {
    expect(read({ 'Retry-After': value }).retryAfterMs).toBe(ms)
  })

  it.each([
    '-1',
    'soon',
    '',
    '1e3',
    '1.5',
    '1.',
    '+1',
    '1 5',
    '\u00a07', // a no-break space is no OWS (and fetch's Headers keeps it)
    '0x10',
    'Thu, 31 Feb 2026 12:00:00 GMT',
    'Thu, 15 Jan 2026 25:00:00 GMT',
  ])('%j is ignored', (value) => {
    expect(read({ 'Retry-After': value }).retryAfterMs).toBeUndefined()
  })
})

describe('the current form (drafts 8 to 11)', () => {
  it('matches RateLimit items to their policies by name, in any order', () => {
    const fields = read({
      'RateLimit-Policy': '"burst";q=100;w=60, "daily";q=1000;w=86400;qu="requests"',
      RateLimit: '"daily";r=990;t=3600, "burst";r=0;t=3',
    })
    expect(fields.form).toBe('current')
    expect(fields.policies).toEqual([
      { name: 'burst', quota: 100, windowMs: 60_000, remaining: 0, resetMs: 3000 },
      {
        name: 'daily',
        quota: 1000,
        windowMs: 86_400_000,
        quotaUnit: 'requests',
        remaining: 990,
        resetMs: 3_600_000,
      },
    ])
  })

  it('keeps partitions apart by pk, and pairs an item without pk with its named policy', () => {
    const fields = read({
      'RateLimit-Policy': '"per-key";q=10;w=1;burst=20;pk=:YWFh:',
      RateLimit: '"per-key";r=4;t=2;pk=:YWFh:, "per-key";r=9;t=1;pk=:YmJi:',
    })
    expect(fields.policies).toEqual([
      {
        name: 'per-key',
        partitionKey: 'YWFh',
        quota: 10,
        windowMs: 1000,
        burst: 20,
        remaining: 4,
        resetMs: 2000,
      },
      { name: 'per-key', partitionKey: 'YmJi', remaining: 9, resetMs: 1000 },
    ])
  })

  it("reads Tollgate's vendor-prefixed burst, and a bare burst from other servers", () => {
    for (const parameter of ['tollgate-burst', 'burst']) {
      const fields = read({
        'RateLimit-Policy': `"per-ip";q=10;w=1;${parameter}=20`,
        RateLimit: '"per-ip";r=19;t=1',
      })
      expect(fields.policies[0]).toMatchObject({ name: 'per-ip', burst: 20 })
    }
  })

  it('reads the token names draft 8 allowed, and a RateLimit without any policy', () => {
    expect(read({ RateLimit: 'default;r=5;t=30' }).policies).toEqual([
      { name: 'default', remaining: 5, resetMs: 30_000 },
    ])
  })

  it('ignores figures of the wrong type or sign, and a field that is no list', () => {
    const fields = read({
      'RateLimit-Policy': '"a";q=-1;w=0, "b";q="ten";w=1.5',
      RateLimit: '"a";r=1.5;t=-2',
    })
    expect(fields.policies).toEqual([{ name: 'a' }, { name: 'b' }])
    expect(read({ RateLimit: '"a";r=1;t=2,' }).form).toBeUndefined()
  })
})

describe('the current form in draft 12 (a, w, c)', () => {
  it('reads a as what is left, RateLimit’s w as the effective window, c as the cost', () => {
    const fields = read({
      'RateLimit-Policy': '"burst";q=100;w=60',
      RateLimit: '"burst";a=80;w=45;c=3',
    })
    expect(fields.form).toBe('current')
    expect(fields.policies).toEqual([
      { name: 'burst', quota: 100, windowMs: 60_000, remaining: 80, resetMs: 45_000, cost: 3 },
    ])
  })

  it('reads members of drafts 11 and 12 in one list (two middlewares of different drafts)', () => {
    const fields = read({
      'RateLimit-Policy': '"old";q=10;w=1, "new";q=5;w=60',
      RateLimit: '"old";r=4;t=1, "new";a=2;w=30;c=1',
    })
    expect(fields.policies).toEqual([
      { name: 'old', quota: 10, windowMs: 1000, remaining: 4, resetMs: 1000 },
      { name: 'new', quota: 5, windowMs: 60_000, remaining: 2, resetMs: 30_000, cost: 1 },
    ])
  })

  it('pairs a, w and c with pk partitions as r and t', () => {
    const fields = read({
      RateLimit: '"per-key";a=4;w=2;pk=:YWFh:;c=1, "per-key";a=9;w=1;pk=:YmJi:',
    })
    expect(fields.policies).toEqual([
      { name: 'per-key', partitionKey: 'YWFh', remaining: 4, resetMs: 2000, cost: 1 },
      { name: 'per-key', partitionKey: 'YmJi', remaining: 9, resetMs: 1000 },
    ])
  })

  it('ignores a, w and c of the wrong type or sign', () => {
    expect(read({ RateLimit: '"x";a=-1;w="soon";c=1.5' }).policies).toEqual([{ name: 'x' }])
  })
})

describe('the single-valued drafts', () => {
  it('draft 7: a RateLimit dictionary and its RateLimit-Policy', () => {
    const fields = read({
      RateLimit: 'limit=100, remaining=42, reset=13',
      'RateLimit-Policy': '10;w=1, 100;w=60;burst=100',
    })
    expect(fields.form).toBe('draft-7')
    expect(fields.policies).toEqual([
      {
        name: '',
        quota: 100,
        windowMs: 60_000,
        burst: 100,
        limit: 100,
        remaining: 42,
        resetMs: 13_000,
      },
    ])
  })

  it('draft 6: three fields, the limit possibly followed by its policy', () => {
    const fields = read({
      'RateLimit-Limit': '10, 10;w=1',
      'RateLimit-Remaining': '3',
      'RateLimit-Reset': '2',
    })
    expect(fields.form).toBe('draft-6')
    expect(fields.policies).toEqual([{ name: '', limit: 10, remaining: 3, resetMs: 2000 }])
  })
})

describe('X-RateLimit-*', () => {
  it('GitHub: epoch seconds, the resource as the policy name', () => {
    const reset = String(NOW / 1000 + 45)
    const fields = read({
      'X-RateLimit-Limit': '5000',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': reset,
      'X-RateLimit-Resource': 'core',
    })
    expect(fields).toEqual({
      retryAfterMs: undefined,
      form: 'x-ratelimit',
      policies: [{ name: 'core', limit: 5000, remaining: 0, resetMs: 45_000 }],
    })
  })

  it.each([
    ['30', 30_000], // seconds from now
    [String(NOW / 1000 + 30), 30_000], // epoch seconds
    [String(NOW + 30_000), 30_000], // epoch ms
    [String(NOW / 1000 - 30), 0], // an epoch already past
    ['999999999', 999_999_999_000], // just below epoch seconds: 31 years from now
  ])('a reset of %s is %i ms from now (resolved by magnitude)', (reset, ms) => {
    expect(read({ 'X-RateLimit-Reset': reset }).policies[0]?.resetMs).toBe(ms)
  })

  it('Twitter/X: X-Rate-Limit-*', () => {
    expect(read({ 'x-rate-limit-limit': '15', 'x-rate-limit-remaining': '14' }).policies).toEqual([
      { name: '', limit: 15, remaining: 14 },
    ])
  })

  it('is not mixed into a response that has the IETF fields', () => {
    const fields = read({ 'X-RateLimit-Remaining': '1', RateLimit: '"a";r=0;t=1' })
    expect(fields.policies).toEqual([{ name: 'a', remaining: 0, resetMs: 1000 }])
  })
})

it('reads from a plain lookup function, and one that throws reads as no field', () => {
  expect(
    readRateLimitFields((name) => (name === 'retry-after' ? '3' : null), NOW).retryAfterMs,
  ).toBe(3000)
  expect(
    readRateLimitFields(() => {
      throw new Error('closed')
    }, NOW),
  ).toEqual({ retryAfterMs: undefined, form: undefined, policies: [] })
})
