import fc from 'fast-check'
import {
  arrayBufferToBase64,
  base64ToArrayBuffer,
  parseDictionary,
  parseList,
  serializeList,
  Token,
} from 'structured-headers'
import { describe, expect, it } from 'vitest'
import { readRateLimitFields } from './read-fields.js'
import { parseSfDictionary, parseSfList, type SfValue } from './structured-parse.js'
import type { ReadFields } from './types.js'

const FIELDS = [
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-resource',
  'x-rate-limit-reset',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-tokens-reset',
  'anthropic-ratelimit-input-tokens-reset',
  'anthropic-ratelimit-output-tokens-limit',
]

/** Pieces of real fields, so the fuzzer reaches deep into the grammar and not only its door. */
const fragment = fc.constantFrom(
  '"a"',
  'b',
  ';r=',
  ';t=',
  ';a=',
  ';c=',
  ';q=',
  ';w=',
  ';pk=',
  ':YWE=:',
  ';qu="requests"',
  ', ',
  ',',
  '=',
  'limit=',
  'remaining=',
  'reset=',
  '-',
  '1',
  '0',
  '99999999999999999',
  '1.5',
  '.',
  '?1',
  '(',
  ')',
  ' ',
  '\t',
  '"',
  '\\',
  'Thu, 15 Jan 2026 12:00:30 GMT',
  'GMT',
  '\u00e9',
  '1e9',
  'NaN',
  // The LLM dialects: Go durations and RFC 3339 times.
  'h',
  'm',
  'ms',
  's',
  '\u00b5s',
  '2026-12-07T06:30:00',
  'Z',
  '+01:00',
  '-99:99',
  '9999-12-31T23:59:60.999999Z',
)
const fieldText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join('')),
)

function expectSane(fields: ReadFields): void {
  const wait = (ms: number | undefined) => {
    if (ms !== undefined) expect(Number.isSafeInteger(ms) && ms >= 0, `wait ${ms}`).toBe(true)
  }
  wait(fields.retryAfterMs)
  for (const policy of fields.policies) {
    expect(typeof policy.name).toBe('string')
    for (const key of [
      'quota',
      'windowMs',
      'burst',
      'limit',
      'remaining',
      'resetMs',
      'cost',
    ] as const) {
      wait(policy[key])
    }
  }
}

describe('malformed fields', () => {
  it('never throw, never give a negative, fractional or NaN figure', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...FIELDS), fieldText),
        fc.oneof(fc.integer({ min: 0, max: 4e12 }), fc.constant(Number.NaN)),
        (fields, now) => {
          expectSane(readRateLimitFields((name) => fields[name], now))
        },
      ),
      { numRuns: 3000 },
    )
  })
})

const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,5}$/)
const bare: fc.Arbitrary<SfValue> = fc.oneof(
  fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }),
  fc.stringMatching(/^[ -~]{0,8}$/),
  fc.boolean(),
  fc.stringMatching(/^[A-Za-z*][A-Za-z0-9:/!#$%&'*+.^_`|~-]{0,6}$/).map((token) => ({ token })),
)
/** Our value as structured-headers writes it. */
const toSerializable = (value: SfValue) =>
  typeof value === 'object' && 'token' in value
    ? new Token(value.token)
    : (value as number | string | boolean)

it('reads every List structured-headers writes as it reads it back', () => {
  const member = fc.record({ value: bare, params: fc.array(fc.tuple(key, bare), { maxLength: 3 }) })
  fc.assert(
    fc.property(fc.array(member, { minLength: 1, maxLength: 4 }), (members) => {
      const text = serializeList(
        members.map((m) => [
          toSerializable(m.value),
          new Map(m.params.map(([k, v]) => [k, toSerializable(v)])),
        ]),
      )
      const ours = parseSfList(text)!.map((m) => [
        normalise(m.value),
        [...m.params].map(([k, v]) => [k, normalise(v)]),
      ])
      const theirs = parseList(text).map(([value, params]) => [
        normalise(value),
        [...params].map(([k, v]) => [k, normalise(v)]),
      ])
      expect(ours).toEqual(theirs)
    }),
    { numRuns: 1000 },
  )
})

function normalise(value: unknown): unknown {
  if (value instanceof Token) return `token:${value.toString()}`
  if (typeof value === 'object' && value !== null && 'token' in value) return `token:${value.token}`
  // Byte sequences compared as the bytes they decode to, in canonical base64.
  if (typeof value === 'object' && value !== null && 'bytes' in value)
    return `bytes:${arrayBufferToBase64(base64ToArrayBuffer(String(value.bytes)))}`
  if (value instanceof ArrayBuffer) return `bytes:${arrayBufferToBase64(value)}`
  return value
}

type Parsed = ReadonlyArray<readonly [unknown, ReadonlyMap<string, unknown>]>
const shape = (members: Parsed): unknown[] =>
  members.map(([value, params]) => [
    Array.isArray(value) ? shape(value as Parsed) : normalise(value),
    [...params].map(([k, v]) => [k, normalise(v)]),
  ])
const tryParse = <T>(parse: () => T): T | undefined => {
  try {
    return parse()
  } catch {
    return undefined
  }
}

it('accepts and refuses arbitrary text as structured-headers does (Dates and Display Strings aside)', () => {
  fc.assert(
    fc.property(fieldText, (text) => {
      fc.pre(!/[@%]/.test(text))
      // HTTP strips a field value's surrounding whitespace (tabs too) before any parser sees it.
      const theirs = tryParse(() => parseList(text.trim()))
      const ours = parseSfList(text)
      const oursShape = ours?.map((m) => [
        typeof m.value === 'object' && 'inner' in m.value
          ? m.value.inner.map((i) => [
              normalise(i.value),
              [...i.params].map(([k, v]) => [k, normalise(v)]),
            ])
          : normalise(m.value),
        [...m.params].map(([k, v]) => [k, normalise(v)]),
      ])
      expect(oursShape).toEqual(theirs === undefined ? undefined : shape(theirs as Parsed))
      const theirDictionary = tryParse(() => parseDictionary(text.trim()))
      const ourDictionary = parseSfDictionary(text)
      expect(ourDictionary === undefined).toBe(theirDictionary === undefined)
      if (ourDictionary !== undefined && theirDictionary !== undefined) {
        expect([...ourDictionary.keys()]).toEqual([...theirDictionary.keys()])
      }
    }),
    { numRuns: 3000 },
  )
})

it('accepts exactly the Byte Sequences whose base64 decodes, as structured-headers does', () => {
  // Any length and any placement of padding: a decoding failure must fail the parse (RFC 8941
  // §4.2.7), never reach a reader that decodes the bytes later.
  const base64Text = fc.stringMatching(/^[A-Za-z0-9+/=]{0,12}$/)
  fc.assert(
    fc.property(base64Text, fc.constantFrom('', ';pk=:YWE=:'), (content, params) => {
      const text = `:${content}:${params}`
      const theirs = tryParse(() => parseList(text))
      const ours = parseSfList(text)
      expect(ours === undefined, text).toBe(theirs === undefined)
      if (ours !== undefined)
        expect(shape(theirs as Parsed)).toEqual(
          ours.map((m) => [normalise(m.value), [...m.params].map(([k, v]) => [k, normalise(v)])]),
        )
    }),
    { numRuns: 5000 },
  )
})
