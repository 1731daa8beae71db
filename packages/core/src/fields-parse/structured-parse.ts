/**
 * A small RFC 9651 (Structured Field Values) parser for what the RateLimit fields carry: Lists
 * and Dictionaries of Items with Parameters. Integers and Decimals are numbers, Strings are
 * strings, Tokens are `{ token }`, Byte Sequences are `{ bytes }` (their base64 text, not
 * decoded), Booleans are booleans; an Inner List is read and kept as `{ inner }`. Dates and
 * Display Strings are not needed here and fail the parse. Nothing throws: text that is not a
 * valid field gives `undefined`, and RFC 9651 says to ignore such a field as a whole.
 */
export type SfValue =
  | number
  | string
  | boolean
  | { readonly token: string }
  | { readonly bytes: string }
  | { readonly inner: readonly SfMember[] }

/** A List member or Dictionary value with its Parameters (a later duplicate key wins). */
export type SfMember = { readonly value: SfValue; readonly params: ReadonlyMap<string, SfValue> }

const KEY_START = /[a-z*]/
const KEY_CHAR = /[a-z0-9_.*-]/
const TOKEN_CHAR = /[!#$%&'*+.^_`|~0-9A-Za-z:/-]/
const BASE64_CHAR = /[A-Za-z0-9+/=]/

/**
 * Whether base64 text decodes, by the forgiving rules `atob` follows (padding optional, but only
 * at the end of a whole quantum): RFC 8941 §4.2.7 fails the parse when decoding fails.
 */
function decodableBase64(text: string): boolean {
  const unpadded = text.length % 4 === 0 ? text.replace(/={1,2}$/, '') : text
  return unpadded.length % 4 !== 1 && !unpadded.includes('=')
}

/** A parse error, caught at the top: the scanner is simpler for unwinding at once. */
class Malformed extends Error {}

function scanner(text: string) {
  let at = 0
  const peek = () => text[at]
  const fail = (): never => {
    throw new Malformed()
  }
  const skip = (pattern: RegExp) => {
    while (at < text.length && pattern.test(text[at]!)) at++
  }
  const expect = (char: string) => {
    if (text[at] !== char) fail()
    at++
  }

  function key(): string {
    const start = at
    if (!KEY_START.test(peek() ?? '')) fail()
    at++
    skip(KEY_CHAR)
    return text.slice(start, at)
  }

  function number(): number {
    const match = /^-?(\d{1,15})(\.\d{1,3})?/.exec(text.slice(at))
    if (match === null) return fail()
    // RFC 9651: at most 15 digits for an Integer, 12 before the point for a Decimal.
    if (match[2] !== undefined && match[1]!.length > 12) fail()
    if (match[2] !== undefined && /^\d/.test(text.slice(at + match[0].length))) fail()
    if (match[2] === undefined && /^[\d.]/.test(text.slice(at + match[0].length))) fail()
    at += match[0].length
    return Number(match[0])
  }

  function string(): string {
    expect('"')
    let out = ''
    for (;;) {
      const char = text[at++]
      if (char === undefined) return fail()
      if (char === '"') return out
      const code = char.charCodeAt(0)
      if (code < 0x20 || code > 0x7e) fail()
      if (char === '\\') {
        const escaped = text[at++]
        if (escaped !== '"' && escaped !== '\\') fail()
        out += escaped
      } else out += char
    }
  }

  function bareItem(): SfValue {
    const char = peek()
    if (char === undefined) return fail()
    if (char === '-' || (char >= '0' && char <= '9')) return number()
    if (char === '"') return string()
    if (char === ':') {
      at++
      const start = at
      skip(BASE64_CHAR)
      const bytes = text.slice(start, at)
      expect(':')
      if (!decodableBase64(bytes)) fail()
      return { bytes }
    }
    if (char === '?') {
      at++
      const bit = text[at++]
      if (bit !== '0' && bit !== '1') fail()
      return bit === '1'
    }
    if (/[A-Za-z*]/.test(char)) {
      const start = at++
      skip(TOKEN_CHAR)
      return { token: text.slice(start, at) }
    }
    return fail()
  }

  function params(): Map<string, SfValue> {
    const out = new Map<string, SfValue>()
    while (peek() === ';') {
      at++
      skip(/ /)
      const name = key()
      let value: SfValue = true
      if (peek() === '=') {
        at++
        value = bareItem()
      }
      out.set(name, value)
    }
    return out
  }

  function innerList(): SfValue {
    expect('(')
    const inner: SfMember[] = []
    for (;;) {
      skip(/ /)
      if (peek() === ')') {
        at++
        return { inner }
      }
      inner.push({ value: bareItem(), params: params() })
      if (peek() !== ' ' && peek() !== ')') fail()
    }
  }

  function member(): SfMember {
    const value = peek() === '(' ? innerList() : bareItem()
    return { value, params: params() }
  }

  /** After a member: the end, or a comma with optional whitespace and another member. */
  function next(): boolean {
    skip(/[ \t]/)
    if (at >= text.length) return false
    expect(',')
    skip(/[ \t]/)
    if (at >= text.length) fail() // a trailing comma
    return true
  }

  /** A Dictionary value: `=member`, or a bare key (true) with its parameters. */
  function dictionaryValue(): SfMember {
    if (peek() !== '=') return { value: true, params: params() }
    at++
    return member()
  }

  return { key, member, dictionaryValue, next, atEnd: () => at >= text.length }
}

/** A List, or undefined when `text` is not one. An empty field is an empty list. */
export function parseSfList(text: string): SfMember[] | undefined {
  try {
    const s = scanner(text.trim())
    const members: SfMember[] = []
    if (s.atEnd()) return members
    do members.push(s.member())
    while (s.next())
    return members
  } catch (error) {
    if (error instanceof Malformed) return undefined
    throw error
  }
}

/** A Dictionary, or undefined when `text` is not one (a later duplicate key wins). */
export function parseSfDictionary(text: string): Map<string, SfMember> | undefined {
  try {
    const s = scanner(text.trim())
    const entries = new Map<string, SfMember>()
    if (s.atEnd()) return entries
    do {
      const name = s.key()
      entries.set(name, s.dictionaryValue())
    } while (s.next())
    return entries
  } catch (error) {
    if (error instanceof Malformed) return undefined
    throw error
  }
}
