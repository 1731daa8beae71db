import type { HeaderAccessor } from '../headers/types.js'
import type { WarnOnce } from '../warnings.js'

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

/**
 * What may follow an address: nothing, or a port. RFC 7239 `node-port`: 1–5 digits (`:4711`),
 * or an obfuscated port, `_` then letters, digits, `.`, `_` or `-` (`:_p1`), which a proxy
 * writes to hide the real one. Either is dropped; refusing the obfuscated form would make the
 * walk stop at that proxy and put all its clients in one bucket.
 */
const PORT = /^(?::(?:\d{1,5}|_[\w.-]+))?$/

/**
 * Parses an address as adapters and forwarding headers carry it: `192.0.2.1`, `192.0.2.1:8080`,
 * `2001:db8::1`, `fe80::1%eth0`, `[2001:db8::1]`, `[2001:db8::1]:443`, `::ffff:192.0.2.1`,
 * and with RFC 7239 obfuscated ports (`192.0.2.1:_p1`, `[2001:db8::1]:_x`). Ports and zone ids
 * are accepted and dropped from the key. Anything else (host names, `unknown`, IPv4 parts with
 * leading zeros, which some parsers read as octal) gives `undefined`.
 */
export function parseIp(text: string): IpAddress | undefined {
  const s = text.trim()
  // Longer input is not an address (the longest, with a port and a zone, is well under this).
  if (s.length > 100) return undefined
  if (s.charCodeAt(0) === 91) {
    const close = s.indexOf(']')
    return close > 0 && PORT.test(s.slice(close + 1)) ? parseIpv6(s.slice(1, close)) : undefined
  }
  const colon = s.indexOf(':')
  // IPv6 has at least two colons; an IPv4 address, one at most, before its port.
  if (colon >= 0 && s.indexOf(':', colon + 1) >= 0) return parseIpv6(s)
  if (colon >= 0 && !PORT.test(s.slice(colon))) return undefined
  const value = ipv4Number(s, 0, colon < 0 ? s.length : colon)
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
      part = digits = 0
    } else if (c >= 48 && c <= 57 && (digits === 0 || part > 0)) {
      part = part * 10 + c - 48
      if (part > 255) return undefined
      digits++
    } else {
      return undefined
    }
  }
  return digits > 0 && dots === 3 ? value * 256 + part : undefined
}

/**
 * RFC 4291 text form, in one pass: eight groups of 1–4 hex digits, one `::` run of zeros, an
 * optional IPv4 tail, then an optional non-empty zone id (`%eth0`).
 */
function parseIpv6(s: string): IpAddress | undefined {
  const percent = s.indexOf('%')
  const n = percent < 0 ? s.length : percent
  if (n === s.length - 1) return undefined
  const g: number[] = []
  let gap = -1
  let i = 0
  if (s.startsWith('::')) {
    gap = 0
    i = 2
  }
  while (i < n) {
    let j = i
    let group = 0
    for (; j < n; j++) {
      const c = s.charCodeAt(j)
      // A letter in lower case (`| 32`) is a-f, or no hex digit at all.
      const lower = c | 32
      const h = c >= 48 && c <= 57 ? c - 48 : lower >= 97 && lower <= 102 ? lower - 87 : -1
      if (h < 0) break
      group = group * 16 + h
    }
    if (j < n && s.charCodeAt(j) === DOT) {
      const v4 = g.length > 6 ? undefined : ipv4Number(s, i, n)
      if (v4 === undefined) return undefined
      g.push(v4 >>> 16, v4 & 0xffff)
      break
    }
    if (j === i || j - i > 4 || g.push(group) > 8) return undefined
    if (j === n) break
    if (s.charCodeAt(j) !== COLON) return undefined
    i = j + 1
    if (s.charCodeAt(i) === COLON) {
      if (gap >= 0) return undefined
      gap = g.length
      i++
    } else if (i === n) {
      return undefined
    }
  }
  const missing = 8 - g.length
  if (gap < 0 ? missing > 0 : missing < 1) return undefined
  if (gap >= 0) g.splice(gap, 0, ...new Array<number>(missing).fill(0))
  // `::ffff:0:0/96`, IPv4-mapped: the first 80 bits zero, the next 16 all ones.
  if (g[5] === 0xffff && (g[0]! | g[1]! | g[2]! | g[3]! | g[4]!) === 0) {
    return { version: 4, value: g[6]! * 65536 + g[7]! }
  }
  return { version: 6, groups: g, zone: percent < 0 ? undefined : s.slice(percent + 1) }
}

/**
 * Canonical text: dotted quad for IPv4, RFC 5952 for IPv6 (lower case, the longest run of two
 * or more zero groups shortened to `::`, the first such run on a tie). The zone id is left out:
 * it names an interface on this host, not the client. With `bits`, of the network: the address
 * with every bit after the first `bits` cleared, written as it would be once cleared.
 */
export function formatIp(ip: IpAddress, bits = 128): string {
  if (ip.version === 4) {
    const v = ip.value & maskV4(bits)
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`
  }
  // Each group masked as it is read: no copy of the address is made.
  const groups = ip.groups
  let best = -1
  let length = 1
  for (let i = 0, run = 0; i < 8; i++) {
    run = (groups[i]! & groupMask(bits, i)) === 0 ? run + 1 : 0
    if (run > length) {
      length = run
      best = i + 1 - run
    }
  }
  let text = ''
  for (let i = 0; i < 8; i++) {
    if (i === best) {
      text += '::'
      i += length - 1
    } else {
      text +=
        (i === 0 || i === best + length ? '' : ':') + (groups[i]! & groupMask(bits, i)).toString(16)
    }
  }
  return text
}

/** The mask of an IPv4 address at `prefix` bits (32 and more: every bit). */
export function maskV4(prefix: number): number {
  return prefix === 0 ? 0 : 0xffffffff << (32 - Math.min(prefix, 32))
}

/** The mask of IPv6 group `index` (0–7) at `prefix` bits. */
export function groupMask(prefix: number, index: number): number {
  const bits = prefix - 16 * index
  if (bits >= 16) return 0xffff
  return bits <= 0 ? 0 : (0xffff << (16 - bits)) & 0xffff
}

/**
 * Looks, now and then, at a request of a resolver that trusts no proxy: `address` is the one it
 * is keyed by, as the adapter gave it; its headers are read with `read` from `source`, or, with
 * no `read`, from `source` as a `HeaderAccessor`.
 */
export type UntrustedForwarding = {
  <Source>(
    address: string,
    source: Source,
    read: (source: Source, name: string) => ReturnType<HeaderAccessor>,
  ): void
  (address: string, header: HeaderAccessor): void
}

/**
 * The proxies part's watch (`trustedProxies.untrusted`), written here rather than with that part
 * because it runs on requests whose client is the socket peer, whose path already runs this
 * module and no other of the part's.
 *
 * WARN_FORWARDED_HEADERS_IGNORED, for a resolver that trusts no proxy: every one of the first
 * ALL_CHECKED requests is looked at, then one in ONE_IN. Behind a proxy every request carries
 * the header, so it is seen at once, while an app that faces clients directly stops reading two
 * headers a request for a warning that never comes. Counted up to ALL_CHECKED + ONE_IN, then
 * back to ALL_CHECKED as that request is looked at, so the count stays small; below zero once
 * a header is seen.
 */
export function untrustedForwarding(warn: WarnOnce): UntrustedForwarding {
  let checks = 0
  // Given no reader, `source` is the request's `HeaderAccessor`.
  return (
    address: string,
    source: unknown,
    read: (source: never, name: string) => ReturnType<HeaderAccessor> = readAccessor,
  ) => {
    if (checks < 0) return
    if (++checks > ALL_CHECKED) {
      if (checks < ALL_CHECKED + ONE_IN) return
      checks = ALL_CHECKED
    }
    const header = read(source as never, 'x-forwarded-for') ?? read(source as never, 'forwarded')
    if (header === undefined) return
    checks = -1
    // A header that ends in the address itself: whoever wrote it also gave that address
    // (Cloudflare appends the client it sees, its CF-Connecting-IP, which a Worker is keyed by),
    // so there is no proxy in front whose trust would key the request otherwise.
    if (`${header}`.split(',').pop()?.trim() === address) return
    warn(
      'WARN_FORWARDED_HEADERS_IGNORED',
      'X-Forwarded-For or Forwarded arrived while trustProxy trusts no proxy: behind a proxy all clients share its key; set trustProxy (or ignore this if clients connect directly)',
    )
  }
}

function readAccessor(header: HeaderAccessor, name: string): ReturnType<HeaderAccessor> {
  return header(name)
}

/** Requests whose forwarding headers are all looked at, from the start. */
const ALL_CHECKED = 1024
/** Then one request in this many. */
const ONE_IN = 64
