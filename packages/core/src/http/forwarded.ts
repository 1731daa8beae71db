/**
 * Parsing of the two forwarding headers into the list of client addresses each proxy reported,
 * left (furthest from us) to right (nearest). The walk that decides which of them to believe
 * lives in client-ip.ts; here an entry is only text, or `undefined` where the proxy reported no
 * usable address (`unknown`, an obfuscated `_identifier`, an element without `for=`, or syntax
 * that does not parse).
 */

const COMMA = 44
const SEMICOLON = 59
const EQUALS = 61
const QUOTE = 34
const BACKSLASH = 92
const SPACE = 32
const TAB = 9

/** `X-Forwarded-For: client, proxy1, proxy2`: the entries, left to right, trimmed. */
export function parseXForwardedFor(value: string): string[] {
  const entries = value.split(',')
  for (let i = 0; i < entries.length; i++) entries[i] = entries[i]!.trim()
  // A trailing empty entry ("a, b,") carries nothing; an empty one in the middle stops the walk.
  if (entries.length > 0 && entries[entries.length - 1] === '') entries.pop()
  return entries
}

/**
 * RFC 7239 `Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8::17]:4711"`:
 * the `for` value of each element, left to right, unquoted. Parameter names are matched
 * without regard to case. An element with no `for`, a repeated `for`, `for=unknown` or an
 * obfuscated identifier (`for=_hidden`) gives `undefined`, which the walk treats as "the proxy
 * could not say who its client was".
 */
export function parseForwarded(value: string): Array<string | undefined> {
  const nodes: Array<string | undefined> = []
  const n = value.length
  let i = 0
  let forValue: string | undefined
  let forCount = 0
  let pairs = 0
  let malformed = false
  const endElement = () => {
    if (pairs > 0 || malformed) {
      nodes.push(malformed || forCount !== 1 ? undefined : usableNode(forValue!))
    }
    forValue = undefined
    forCount = 0
    pairs = 0
    malformed = false
  }
  while (i < n) {
    i = skipSpace(value, i)
    if (i >= n) break
    const c = value.charCodeAt(i)
    if (c === COMMA) {
      endElement()
      i++
      continue
    }
    if (c === SEMICOLON) {
      i++
      continue
    }
    const pair = readPair(value, i)
    i = pair.end
    if (pair.name === undefined) {
      malformed = true
      // Resume at the next element; the proxy that appended it wrote valid syntax.
      while (i < n && value.charCodeAt(i) !== COMMA) i++
      continue
    }
    pairs++
    if (pair.name.length === 3 && pair.name.toLowerCase() === 'for') {
      forValue = pair.value
      forCount++
    }
  }
  endElement()
  return nodes
}

/** `unknown` and `_obfuscated` identifiers name no address. */
function usableNode(node: string): string | undefined {
  const text = node.trim()
  if (text.length === 0 || text.charCodeAt(0) === 95 /* _ */) return undefined
  return text.toLowerCase() === 'unknown' ? undefined : text
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && (s.charCodeAt(i) === SPACE || s.charCodeAt(i) === TAB)) i++
  return i
}

/** Reads `name=value` or `name="quoted \"value\""` from `start`; name undefined when malformed. */
function readPair(
  s: string,
  start: number,
): { name: string | undefined; value: string; end: number } {
  let i = start
  while (i < s.length && !isDelimiter(s.charCodeAt(i)) && s.charCodeAt(i) !== EQUALS) i++
  const name = s.slice(start, i).trim()
  if (i >= s.length || s.charCodeAt(i) !== EQUALS || name.length === 0) {
    return { name: undefined, value: '', end: i }
  }
  i = skipSpace(s, i + 1)
  if (s.charCodeAt(i) !== QUOTE) {
    const valueStart = i
    while (i < s.length && !isDelimiter(s.charCodeAt(i))) i++
    return { name, value: s.slice(valueStart, i).trim(), end: i }
  }
  let text = ''
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === QUOTE) {
      const end = skipSpace(s, i + 1)
      const closed = end >= s.length || isDelimiter(s.charCodeAt(end))
      return closed ? { name, value: text, end } : { name: undefined, value: '', end }
    }
    if (c === BACKSLASH && i + 1 < s.length) i++
    text += s[i]
  }
  // Unterminated quote: malformed; the caller resumes after the next comma.
  return { name: undefined, value: '', end: s.indexOf(',', start) < 0 ? s.length : start }
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === SEMICOLON
}
