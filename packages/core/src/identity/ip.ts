/**
 * An IP address as numbers: IPv4 as an unsigned 32-bit number, IPv6 as its eight 16-bit groups
 * (plain numbers are several times faster than a 128-bit bigint on the request path). An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is returned as the IPv4 address it carries,
 * so one client never has two keys depending on how its socket was opened.
 */
export type IpAddress =
  | { readonly version: 4; readonly value: number }
  | {
      readonly version: 6
      readonly groups: readonly number[]
      readonly zone: string | undefined
    }

const COLON = 58
const DOT = 46
const OPEN_BRACKET = 91
const UNDERSCORE = 95
const HYPHEN = 45
/** Longer input is not an address (the longest, with a port and a zone, is well under this). */
const MAX_ADDRESS_LENGTH = 100

/**
 * Parses an address as adapters and forwarding headers carry it: `192.0.2.1`, `192.0.2.1:8080`,
 * `2001:db8::1`, `fe80::1%eth0`, `[2001:db8::1]`, `[2001:db8::1]:443`, `::ffff:192.0.2.1`,
 * and with RFC 7239 obfuscated ports (`192.0.2.1:_p1`, `[2001:db8::1]:_x`). Ports and zone ids
 * are accepted and dropped from the key. Anything else (host names, `unknown`, IPv4 parts with
 * leading zeros, which some parsers read as octal) gives `undefined`.
 */
export function parseIp(text: string): IpAddress | undefined {
  const s = text.trim()
  if (s.length === 0 || s.length > MAX_ADDRESS_LENGTH) return undefined
  if (s.charCodeAt(0) === OPEN_BRACKET) {
    const close = s.indexOf(']')
    if (close < 0 || !isPortSuffix(s, close + 1)) return undefined
    return parseIpv6(s.slice(1, close))
  }
  const colon = s.indexOf(':')
  if (colon < 0) return parseIpv4(s)
  // One colon only: an IPv4 address with a port. IPv6 always has at least two.
  if (s.indexOf(':', colon + 1) < 0) {
    return isPortSuffix(s, colon) ? parseIpv4(s.slice(0, colon)) : undefined
  }
  return parseIpv6(s)
}

/**
 * A port from `start` to the end of `s`, or nothing at all. RFC 7239 `node-port`: 1–5 digits
 * (`:4711`), or an obfuscated port, `_` then letters, digits, `.`, `_` or `-` (`:_p1`), which a
 * proxy writes to hide the real one. Either is dropped; refusing the obfuscated form would make
 * the walk stop at that proxy and put all its clients in one bucket.
 */
function isPortSuffix(s: string, start: number): boolean {
  if (start === s.length) return true
  if (s.charCodeAt(start) !== COLON) return false
  const port = start + 1
  if (s.charCodeAt(port) === UNDERSCORE) {
    return port + 1 < s.length && every(s, port + 1, isObfuscatedPortChar)
  }
  return port < s.length && s.length - port <= 5 && every(s, port, isDigit)
}

/** True when every character of `s` from `start` to its end passes `test`. */
function every(s: string, start: number, test: (c: number) => boolean): boolean {
  for (let i = start; i < s.length; i++) if (!test(s.charCodeAt(i))) return false
  return true
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57
}

/** ALPHA / DIGIT / "." / "_" / "-" */
function isObfuscatedPortChar(c: number): boolean {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
  return letter || isDigit(c) || c === DOT || c === UNDERSCORE || c === HYPHEN
}

function parseIpv4(s: string): IpAddress | undefined {
  const value = ipv4Number(s, 0, s.length)
  return value === undefined ? undefined : { version: 4, value }
}

/**
 * Strict dotted quad in `s[start, end)`: four decimal parts 0–255, no leading zeros; as text,
 * already what `formatIp` would write.
 */
export function ipv4Number(s: string, start: number, end: number): number | undefined {
  let value = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i)
    if (c === DOT) {
      if (digits === 0 || ++dots > 3) return undefined
      value = value * 256 + part
      part = 0
      digits = 0
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return undefined
      part = part * 10 + (c - 48)
      digits++
      if (part > 255) return undefined
    } else {
      return undefined
    }
  }
  if (digits === 0 || dots !== 3) return undefined
  return value * 256 + part
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 97 && c <= 102) return c - 87
  if (c >= 65 && c <= 70) return c - 55
  return -1
}

/** RFC 4291 text form: eight 16-bit groups, one `::` run of zeros, an optional IPv4 tail. */
function parseIpv6(input: string): IpAddress | undefined {
  let s = input
  let zone: string | undefined
  const percent = s.indexOf('%')
  if (percent >= 0) {
    zone = s.slice(percent + 1)
    if (zone.length === 0) return undefined
    s = s.slice(0, percent)
  }
  const groups = ipv6Groups(s)
  if (groups === undefined) return undefined
  if (isMapped(groups)) return { version: 4, value: groups[6]! * 65536 + groups[7]! }
  return { version: 6, groups, zone }
}

/** `::ffff:0:0/96`: the first 80 bits zero, the next 16 all ones. */
function isMapped(groups: readonly number[]): boolean {
  return (
    groups[5] === 0xffff &&
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0
  )
}

/** The eight groups of an IPv6 address, with `::` expanded; undefined when malformed. */
function ipv6Groups(s: string): number[] | undefined {
  const n = s.length
  const groups: number[] = []
  let gap = -1
  let i = 0
  if (n >= 2 && s.charCodeAt(0) === COLON) {
    if (s.charCodeAt(1) !== COLON) return undefined
    gap = 0
    i = 2
  }
  while (i < n) {
    if (groups.length === 8) return undefined
    let j = i
    let group = 0
    for (let h = hexDigit(s.charCodeAt(j)); j < n && h >= 0; h = hexDigit(s.charCodeAt(++j))) {
      group = group * 16 + h
    }
    if (j < n && s.charCodeAt(j) === DOT) {
      const v4 = ipv4Number(s, i, n)
      if (v4 === undefined || groups.length > 6) return undefined
      groups.push(Math.floor(v4 / 65536), v4 % 65536)
      break
    }
    if (j === i || j - i > 4) return undefined
    groups.push(group)
    if (j === n) break
    if (s.charCodeAt(j) !== COLON) return undefined
    if (s.charCodeAt(j + 1) === COLON) {
      if (gap >= 0) return undefined
      gap = groups.length
      i = j + 2
    } else {
      i = j + 1
      if (i === n) return undefined
    }
  }
  if (gap < 0) return groups.length === 8 ? groups : undefined
  if (groups.length > 7) return undefined
  groups.splice(gap, 0, ...new Array<number>(8 - groups.length).fill(0))
  return groups
}

/**
 * Canonical text: dotted quad for IPv4, RFC 5952 for IPv6 (lower case, the longest run of two
 * or more zero groups shortened to `::`, the first such run on a tie). The zone id is left out:
 * it names an interface on this host, not the client.
 */
export function formatIp(ip: IpAddress): string {
  if (ip.version === 4) return formatIpv4(ip.value)
  const groups = ip.groups
  let bestStart = -1
  let bestLength = 1
  for (let start = 0; start < 8; ) {
    let end = start
    while (end < 8 && groups[end] === 0) end++
    if (end - start > bestLength) {
      bestStart = start
      bestLength = end - start
    }
    start = end === start ? start + 1 : end
  }
  let text = ''
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      text += '::'
      i += bestLength - 1
      continue
    }
    if (text !== '' && !text.endsWith(':')) text += ':'
    text += groups[i]!.toString(16)
  }
  return text
}

function formatIpv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`
}
