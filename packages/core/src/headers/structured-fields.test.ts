import fc from 'fast-check'
import { parseDictionary, parseItem, parseList, Token } from 'structured-headers'
import { describe, expect, it } from 'vitest'
import { byteSequence } from './byte-sequence.js'
import {
  serializeBareItem,
  serializeDictionary,
  serializeInteger,
  serializeItem,
  serializeKey,
  serializeList,
  serializeString,
  serializeToken,
} from './structured-fields.js'

describe('RFC 9651 serializer', () => {
  it('writes integers within ±999,999,999,999,999 and refuses others', () => {
    expect(serializeInteger(0)).toBe('0')
    expect(serializeInteger(-42)).toBe('-42')
    expect(serializeInteger(999_999_999_999_999)).toBe('999999999999999')
    expect(() => serializeInteger(1_000_000_000_000_000)).toThrow(TypeError)
    expect(() => serializeInteger(1.5)).toThrow(TypeError)
    expect(() => serializeInteger(Number.NaN)).toThrow(TypeError)
  })

  it('escapes " and \\ in strings and refuses non-printable or non-ASCII characters', () => {
    expect(serializeString('a"b\\c')).toBe('"a\\"b\\\\c"')
    expect(parseItem(serializeString('a"b\\c'))[0]).toBe('a"b\\c')
    expect(() => serializeString('line\nbreak')).toThrow(TypeError)
    expect(() => serializeString('café')).toThrow(TypeError)
  })

  it('round-trips any printable ASCII string through a conforming parser', () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    })
    fc.assert(
      fc.property(printable, (value) => {
        expect(parseItem(serializeString(value))[0]).toBe(value)
      }),
    )
  })

  it('checks tokens and keys', () => {
    expect(serializeToken('foo/bar:baz')).toBe('foo/bar:baz')
    expect(serializeToken('*x')).toBe('*x')
    expect(() => serializeToken('1abc')).toThrow(TypeError)
    expect(() => serializeToken('a b')).toThrow(TypeError)
    expect(serializeKey('pk')).toBe('pk')
    expect(serializeKey('acme-burst.v2')).toBe('acme-burst.v2')
    expect(() => serializeKey('Q')).toThrow(TypeError)
    expect(() => serializeKey('-q')).toThrow(TypeError)
  })

  it('writes byte sequences as padded base64 between colons', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253])
    const text = serializeBareItem(bytes)
    expect(text).toBe(`:${Buffer.from(bytes).toString('base64')}:`)
    expect(new Uint8Array(parseItem(text)[0] as ArrayBuffer)).toEqual(bytes)
  })

  it('byte sequences match Node’s base64 for every length, whole or a prefix', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.nat(40), (bytes, cut) => {
        expect(byteSequence(bytes)).toBe(`:${Buffer.from(bytes).toString('base64')}:`)
        const length = Math.min(cut, bytes.length)
        const prefix = Buffer.from(bytes.subarray(0, length)).toString('base64')
        expect(byteSequence(bytes, length)).toBe(`:${prefix}:`)
      }),
    )
  })

  it('byte sequences made one after another, of one length or of several, are each their own', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 15 }), { maxLength: 20 }), (list) => {
        const made = list.map((bytes) => byteSequence(bytes))
        expect(made).toEqual(list.map((bytes) => `:${Buffer.from(bytes).toString('base64')}:`))
      }),
    )
  })

  it('writes items with parameters; a true parameter is the bare key', () => {
    const item = serializeItem({
      value: 'peruser',
      params: [
        ['q', 100],
        ['qu', 'content-bytes'],
        ['w', 60],
        ['secure', true],
        ['off', false],
        ['kind', { token: 'fixed' }],
      ],
    })
    expect(item).toBe('"peruser";q=100;qu="content-bytes";w=60;secure;off=?0;kind=fixed')
    const [value, params] = parseItem(item)
    expect(value).toBe('peruser')
    expect(Object.fromEntries(params)).toEqual({
      q: 100,
      qu: 'content-bytes',
      w: 60,
      secure: true,
      off: false,
      kind: new Token('fixed'),
    })
  })

  it('writes lists and dictionaries that parse back', () => {
    const list = serializeList([
      { value: 'a', params: [['q', 1]] },
      { value: 'b', params: [['q', 2]] },
    ])
    expect(list).toBe('"a";q=1, "b";q=2')
    expect(parseList(list).map(([v, p]) => [v, Object.fromEntries(p)])).toEqual([
      ['a', { q: 1 }],
      ['b', { q: 2 }],
    ])
    const dictionary = serializeDictionary([
      ['limit', { value: 100 }],
      ['remaining', { value: 50 }],
      ['flag', { value: true, params: [['x', 1]] }],
    ])
    expect(dictionary).toBe('limit=100, remaining=50, flag;x=1')
    expect([...parseDictionary(dictionary).keys()]).toEqual(['limit', 'remaining', 'flag'])
  })
})
