import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { encodeKey, encodeRule, redisKey } from './keys.js'
import { slotOfTag } from './slot.js'

describe('redisKey', () => {
  it('is <prefix>:<rule>:{<key>}, readable for ordinary ids', () => {
    expect(redisKey('tg', 'login-per-ip', 'ip:203.0.113.7')).toBe(
      'tg:login-per-ip:{ip:203.0.113.7}',
    )
  })

  it('escapes braces, %, and in rule ids colons, so nothing can move the hash tag', () => {
    expect(redisKey('tg', 'a:b{c}', 'x{y}%z')).toBe('tg:a%3Ab%7Bc%7D:{x%7By%7D%25z}')
  })

  it('gives different keys for different inputs, and one tag only', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        fc.pre(a !== b)
        expect(encodeKey(a)).not.toBe(encodeKey(b))
        expect(encodeRule(a)).not.toBe(encodeRule(b))
        expect(redisKey('tg', 'r', a).match(/[{}]/g)).toEqual(['{', '}'])
      }),
      { numRuns: 2000 },
    )
  })

  it('escapes exactly what the full replacement escapes: the quick test misses nothing', () => {
    const escapes = (colon: boolean) => (char: string) =>
      char === '%' || char === '{' || char === '}' || (colon && char === ':')
        ? `%${char.charCodeAt(0).toString(16).toUpperCase()}`
        : `%u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
    const replaced = (text: string, specials: RegExp, colon: boolean) =>
      text === '' ? '%0' : text.replace(specials, escapes(colon))
    const unit = fc.oneof(
      fc.constantFrom('%', '{', '}', ':', 'a', '.', '\uD83D', '\uDE00', '🚦'),
      fc.string({ unit: 'binary', maxLength: 1 }),
    )
    // At most 20 units of at most 6 characters once escaped: under the 128 past which a part is
    // hashed instead.
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 20 }), (text) => {
        expect(encodeKey(text)).toBe(replaced(text, /[%{}]|\p{Cs}/gu, false))
        expect(encodeRule(text)).toBe(replaced(text, /[%{}:]|\p{Cs}/gu, true))
      }),
      { numRuns: 3000 },
    )
  })

  it('keeps lone surrogates apart (UTF-8 would turn both into U+FFFD)', () => {
    expect(encodeKey('\uD800')).not.toBe(encodeKey('\uDFFF'))
    expect(encodeKey('🚦')).toBe('🚦')
  })

  it('never leaves the tag empty, which would not be a hash tag at all', () => {
    expect(encodeKey('')).toBe('%0')
  })

  it('hashes long keys to 45 characters', () => {
    const long = encodeKey('x'.repeat(10_000))
    expect(long).toMatch(/^%#[\w-]{43}$/)
    expect(encodeKey(`${'x'.repeat(9_999)}y`)).not.toBe(long)
    expect(encodeKey('x'.repeat(128))).toBe('x'.repeat(128))
  })
})

describe('slotOfTag', () => {
  it("is Redis Cluster's CRC16 mod 16384", () => {
    // Reference values from the Redis Cluster specification and CLUSTER KEYSLOT.
    expect(slotOfTag('123456789')).toBe(12739)
    expect(slotOfTag('foo')).toBe(12182)
    expect(slotOfTag('bar')).toBe(5061)
    expect(slotOfTag('hello')).toBe(866)
  })
})
