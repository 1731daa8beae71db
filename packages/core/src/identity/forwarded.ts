/**
 * Parsing of the two forwarding headers into the list of client addresses each proxy reported,
 * left (furthest from us) to right (nearest). The walk that decides which of them to believe
 * lives in client-ip.ts; here an entry is only text, or `undefined` where the proxy reported no
 * usable address (`unknown`, an obfuscated `_identifier`, an empty element, an element without
 * `for=`, or syntax that does not parse).
 *
 * A proxy appends its entry after whatever the client sent, and Node joins the client's header
 * line and the proxy's with ", ". So nothing the client writes may change how the text after
 * that comma is read: a client can add entries only to the left of what a proxy appended.
 */

const COMMA = 44
const SEMICOLON = 59
const EQUALS = 61
const QUOTE = 34
const BACKSLASH = 92
const SPACE = 32
const TAB = 9
const UNDERSCORE = 95

/**
 * `X-Forwarded-For: client, proxy1, proxy2`: the entries, left to right, trimmed. An empty
 * entry stays, even the last one: a trusted proxy that adds an empty line after the client's
 * (`"9.9.9.9, "` once joined) did not know the client, and the walk must stop there rather than
 * believe the client-written entry to its left. A header with no text at all has no entries.
 */
export function parseXForwardedFor(value: string): string[] {
  if (isBlank(value)) return []
  const entries = value.split(',')
  for (let i = 0; i < entries.length; i++) entries[i] = entries[i]!.trim()
  return entries
}

/**
 * RFC 7239 `Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8::17]:4711"`:
 * the `for` value of each element, left to right, unquoted. Parameter names are matched
 * without regard to case. An element with no `for` (an empty one too), a repeated `for`,
 * `for=unknown`, an obfuscated identifier (`for=_hidden`) or malformed syntax gives
 * `undefined`, which the walk treats as "the proxy could not say who its client was". A header
 * with no text at all has no elements.
 */
export function parseForwarded(value: string): Array<string | undefined> {
  const nodes: Array<string | undefined> = []
  if (isBlank(value)) return nodes
  let i = 0
  for (;;) {
    const element = readElement(value, i)
    nodes.push(element.node)
    if (element.end >= value.length) return nodes
    i = element.end + 1 // past the comma that ended the element
  }
}

/** Reads the element from `start` to the comma that ends it, or to the end of the text. */
function readElement(s: string, start: number): { node: string | undefined; end: number } {
  let forValue: string | undefined
  let forCount = 0
  let i = start
  for (;;) {
    i = skipSpace(s, i)
    if (i >= s.length || s.charCodeAt(i) === COMMA) break
    if (s.charCodeAt(i) === SEMICOLON) {
      i++
      continue
    }
    const pair = readPair(s, i)
    if (pair.name === undefined) return { node: undefined, end: pair.end }
    i = pair.end
    if (pair.name.length === 3 && pair.name.toLowerCase() === 'for') {
      forValue = pair.value
      forCount++
    }
  }
  return { node: forCount === 1 ? usableNode(forValue!) : undefined, end: i }
}

/** `unknown` and `_obfuscated` identifiers name no address. */
function usableNode(node: string): string | undefined {
  const text = node.trim()
  if (text.length === 0 || text.charCodeAt(0) === UNDERSCORE) return undefined
  return text.toLowerCase() === 'unknown' ? undefined : text
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && (s.charCodeAt(i) === SPACE || s.charCodeAt(i) === TAB)) i++
  return i
}

function isBlank(s: string): boolean {
  return skipSpace(s, 0) === s.length
}

/**
 * Reads `name=value` or `name="quoted \"value\""` from `start`, up to the delimiter after it.
 * A malformed pair gives name `undefined` and ends at the first comma after its start, or
 * after its opening quote: that comma may be the one joining the client's line to a proxy's.
 */
function readPair(
  s: string,
  start: number,
): { name: string | undefined; value: string; end: number } {
  let i = start
  while (i < s.length && !isDelimiter(s.charCodeAt(i)) && s.charCodeAt(i) !== EQUALS) i++
  const name = s.slice(start, i).trim()
  if (i >= s.length || s.charCodeAt(i) !== EQUALS || name.length === 0) {
    return malformed(s, i)
  }
  i = skipSpace(s, i + 1)
  if (s.charCodeAt(i) !== QUOTE) {
    const valueStart = i
    while (i < s.length && !isDelimiter(s.charCodeAt(i))) i++
    return { name, value: s.slice(valueStart, i).trim(), end: i }
  }
  const openingQuote = i
  let text = ''
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === QUOTE) {
      const end = skipSpace(s, i + 1)
      const closed = end >= s.length || isDelimiter(s.charCodeAt(end))
      // A quote closed by anything else (`for="a"junk`) ends no valid quoted string: the
      // client may have opened it so that it runs into a proxy's element and ends inside it.
      return closed ? { name, value: text, end } : malformed(s, openingQuote)
    }
    if (c === BACKSLASH && i + 1 < s.length) i++
    text += s[i]
  }
  return malformed(s, openingQuote)
}

/** A malformed pair: its element ends at the first comma from `from`. */
function malformed(s: string, from: number): { name: undefined; value: string; end: number } {
  const comma = s.indexOf(',', from)
  return { name: undefined, value: '', end: comma < 0 ? s.length : comma }
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === SEMICOLON
}
