import { describe, expect, it } from 'vitest'
import { createResponder } from '../response/responder.js'
import { decision, verdict } from '../response/test-fixtures.js'
import {
  carriesSingleValuedField,
  draft6Headers,
  draft7Headers,
  FAMILIES,
  STANDARD_HEADERS,
  xRateLimitHeaders,
} from './families.js'
import { isSingleValuedName, mergeFields } from './field-merge.js'

const legacy = (limit: number, remaining: number, reset: number) =>
  [
    ['X-RateLimit-Limit', String(limit)],
    ['X-RateLimit-Remaining', String(remaining)],
    ['X-RateLimit-Reset', String(reset)],
  ] as const

/** A response's fields by lower-case name, with `mergeFields`' writes applied as Node would. */
function respond(...writers: ReadonlyArray<ReadonlyArray<readonly [string, string]>>) {
  const fields = new Map<string, string[]>()
  for (const entries of writers) {
    const writes = mergeFields(entries, (name) => fields.get(name)?.join(', '))
    for (const [name, value, write] of writes) {
      const lower = name.toLowerCase()
      if (write === 'set') fields.set(lower, [value])
      else fields.set(lower, [...(fields.get(lower) ?? []), value])
    }
  }
  return Object.fromEntries([...fields].map(([name, values]) => [name, values.join(', ')]))
}

describe('mergeFields', () => {
  it('keeps the description of the rule with fewer requests left, whichever writes first', () => {
    const global = legacy(100, 99, 1767225660)
    const login = legacy(5, 0, 1767225900)
    const expected = {
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1767225900',
    }
    expect(respond(global, login)).toEqual(expected)
    expect(respond(login, global)).toEqual(expected)
  })

  it('breaks a tie in remaining requests by the later reset, then the lower limit', () => {
    const soon = legacy(10, 3, 100)
    const later = legacy(50, 3, 200)
    expect(respond(soon, later)['x-ratelimit-reset']).toBe('200')
    expect(respond(later, soon)['x-ratelimit-reset']).toBe('200')
    const small = legacy(10, 3, 100)
    const large = legacy(50, 3, 100)
    expect(respond(large, small)['x-ratelimit-limit']).toBe('10')
    expect(respond(small, large)['x-ratelimit-limit']).toBe('10')
  })

  it('appends list members, keeps the longer Retry-After and replaces Content-Type', () => {
    const first = [
      ['RateLimit-Policy', '"global";q=100;w=60'],
      ['RateLimit', '"global";r=99;t=1'],
      ['Retry-After', '30'],
      ['Content-Type', 'text/plain'],
    ] as const
    const second = [
      ['RateLimit-Policy', '"login";q=5;w=300'],
      ['RateLimit', '"login";r=0;t=240'],
      ['Retry-After', '7'],
      ['Content-Type', 'application/problem+json'],
    ] as const
    expect(respond(first, second)).toEqual({
      'ratelimit-policy': '"global";q=100;w=60, "login";q=5;w=300',
      ratelimit: '"global";r=99;t=1, "login";r=0;t=240',
      'retry-after': '30',
      'content-type': 'application/problem+json',
    })
  })

  it('treats draft-6 fields as a group and draft-7 RateLimit as one value', () => {
    const draft6 = (remaining: number) =>
      [
        ['RateLimit-Limit', '10'],
        ['RateLimit-Remaining', String(remaining)],
        ['RateLimit-Reset', '5'],
      ] as const
    expect(respond(draft6(2), draft6(7))['ratelimit-remaining']).toBe('2')
    expect(respond(draft6(7), draft6(2))['ratelimit-remaining']).toBe('2')
    const draft7 = (remaining: number) =>
      [['RateLimit', `limit=10, remaining=${remaining}, reset=5`]] as const
    expect(respond(draft7(7), draft7(2))['ratelimit']).toBe('limit=10, remaining=2, reset=5')
    expect(respond(draft7(2), draft7(7))['ratelimit']).toBe('limit=10, remaining=2, reset=5')
  })

  it('keeps the current form when two middlewares send different drafts, whichever writes first', () => {
    const current = [
      ['RateLimit-Policy', '"login";q=5;w=60'],
      ['RateLimit', '"login";r=0;t=60'],
    ] as const
    const draft7 = [
      ['RateLimit-Policy', '100;w=1'],
      ['RateLimit', 'limit=100, remaining=99, reset=1'],
    ] as const
    const expected = { 'ratelimit-policy': '"login";q=5;w=60', ratelimit: '"login";r=0;t=60' }
    expect(respond(draft7, current)).toEqual(expected)
    expect(respond(current, draft7)).toEqual(expected)
    const another = [
      ['RateLimit-Policy', '"per-ip";q=100;w=1'],
      ['RateLimit', '"per-ip";r=99;t=1'],
    ] as const
    expect(respond(draft7, current, another)).toEqual({
      'ratelimit-policy': '"login";q=5;w=60, "per-ip";q=100;w=1',
      ratelimit: '"login";r=0;t=60, "per-ip";r=99;t=1',
    })
  })

  it('keeps the denying middleware’s draft when only one of them denies, whichever writes first', () => {
    const admitted = [
      ['RateLimit-Policy', '"global";q=100;w=1'],
      ['RateLimit', '"global";r=98;t=1'],
    ] as const
    const denied = [
      ['RateLimit-Policy', '1;w=60'],
      ['RateLimit', 'limit=1, remaining=0, reset=60'],
      ['Retry-After', '60'],
    ] as const
    const expected = {
      'ratelimit-policy': '1;w=60',
      ratelimit: 'limit=1, remaining=0, reset=60',
      'retry-after': '60',
    }
    expect(respond(admitted, denied)).toEqual(expected)
    expect(respond(denied, admitted)).toEqual(expected)
  })

  it('merges onto a response that carries only a RateLimit-Policy of another draft', () => {
    expect(carriesSingleValuedField(['content-type', 'ratelimit-policy'])).toBe(true)
    expect(
      respond([['RateLimit-Policy', '10;w=60']], [['RateLimit-Policy', '"per-ip";q=1;w=1']]),
    ).toEqual({ 'ratelimit-policy': '"per-ip";q=1;w=1' })
  })

  it('replaces single-valued fields whose value it cannot read', () => {
    const appSet = [['X-RateLimit-Remaining', 'lots']] as const
    expect(respond(appSet, legacy(10, 9, 100))).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '9',
      'x-ratelimit-reset': '100',
    })
  })

  it('keeps the denying rule’s figures, which Retry-After answers for, whichever writes first', () => {
    const admitted = legacy(3, 1, 60)
    const denial = [...legacy(5, 2, 300), ['Retry-After', '300']] as const
    const expected = {
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '2',
      'x-ratelimit-reset': '300',
      'retry-after': '300',
    }
    expect(respond(admitted, denial)).toEqual(expected)
    expect(respond(denial, admitted)).toEqual(expected)
  })

  it('writes an admission’s group when the denial before it sent none', () => {
    const denial = [
      ['RateLimit', '"login";r=0;t=300'],
      ['Retry-After', '300'],
    ] as const
    expect(respond(denial, legacy(100, 99, 60))).toMatchObject({
      'x-ratelimit-remaining': '99',
      'retry-after': '300',
    })
  })
})

describe('isSingleValuedName', () => {
  it('names exactly the families’ single-valued fields, Retry-After and Content-Type', () => {
    const candidates = [
      ...FAMILIES.flatMap((family) => family.names),
      'Retry-After',
      'Content-Type',
      'Access-Control-Expose-Headers',
    ]
    const single = new Set([
      ...FAMILIES.flatMap((family) => family.singleValued ?? []),
      'Retry-After',
      'Content-Type',
    ])
    for (const name of candidates) expect(isSingleValuedName(name), name).toBe(single.has(name))
  })

  it('agrees with what the families write as single, and with each responder’s names', () => {
    const figures = decision('per-ip', { remaining: 3, resetAfterMs: 2500 })
    for (const legacyHeaders of [false, true]) {
      for (const standardHeaders of STANDARD_HEADERS) {
        const options = { legacyHeaders, standardHeaders, exposeHeaders: true }
        const responder = createResponder(options)
        const names: string[] = []
        responder.writeFields(verdict([figures]), {
          write(name, _value, single) {
            names.push(name)
            expect(single === true, name).toBe(isSingleValuedName(name))
          },
        })
        const sent = [...responder.headerNames, 'Content-Type']
        expect(sent.filter(isSingleValuedName), JSON.stringify(options)).toEqual(
          responder.singleValuedNames,
        )
        expect(names.length > 0).toBe(legacyHeaders || standardHeaders !== false)
      }
    }
  })
})

describe('the families table', () => {
  it('lists every standardHeaders value the families answer to, and each family once', () => {
    expect(STANDARD_HEADERS).toEqual([
      false,
      ...FAMILIES.flatMap((family) => family.standardHeaders),
    ])
  })

  it('merges as groups exactly the single-valued fields of X-RateLimit-* and draft-6', () => {
    const grouped = FAMILIES.filter((family) => family.singleValued !== undefined)
    expect(grouped).toEqual([xRateLimitHeaders, draft6Headers])
    for (const family of grouped) {
      for (const name of family.singleValued!) {
        expect(carriesSingleValuedField([name.toLowerCase()]), name).toBe(true)
      }
    }
  })

  it('merges every field a family sends and Retry-After, and no other', () => {
    const names = [...FAMILIES.flatMap((family) => family.names), 'Retry-After']
    for (const name of names)
      expect(carriesSingleValuedField([name.toLowerCase()]), name).toBe(true)
    for (const other of [
      'content-type',
      'access-control-expose-headers',
      'x-ratelimit',
      'ratelimit-',
    ]) {
      expect(carriesSingleValuedField([other]), other).toBe(false)
    }
    expect(carriesSingleValuedField(['content-type', 'ratelimit-policy'])).toBe(true)
  })

  it('carries the merge groups on the families that send them: X-RateLimit-*, draft-6, draft-7', () => {
    const grouped = FAMILIES.filter((family) => family.group !== undefined)
    expect(grouped).toEqual([xRateLimitHeaders, draft6Headers, draft7Headers])
    const entries = (family: (typeof grouped)[number]) =>
      family.names.map((name) => [name.toLowerCase(), name === 'RateLimit' ? 'limit=1' : '1'])
    for (const family of grouped) {
      const members = entries(family).filter(([lower, value]) => family.group!.has(lower!, value!))
      expect(members.map(([lower]) => lower)).toEqual(
        family === draft7Headers ? ['ratelimit'] : family.singleValued!.map((n) => n.toLowerCase()),
      )
    }
  })
})
