import { checkWhole, invalidOption } from '../options/option-values.js'
import { formatIp, groupMask, type IpAddress, maskV4, parseIp } from './ip.js'

/** A network: every address whose first `prefix` bits equal those of `network`. */
export type Cidr =
  | { readonly version: 4; readonly network: number; readonly prefix: number }
  | { readonly version: 6; readonly network: readonly number[]; readonly prefix: number }

/**
 * Ranges that can be named instead of written out, as in Express's `trust proxy`:
 * `loopback`, `linklocal`, and `private` (alias `uniquelocal`: RFC 1918 and IPv6 ULA).
 */
const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

function maskGroups(groups: readonly number[], prefix: number): number[] {
  const masked = new Array<number>(8)
  for (let i = 0; i < 8; i++) masked[i] = groups[i]! & groupMask(prefix, i)
  return masked
}

/**
 * Parses `10.0.0.0/8`, `2001:db8::/32`, or a single address (a /32 or /128). An IPv4-mapped
 * IPv6 network of prefix ≥ 96 becomes the IPv4 network it covers. Host bits are cleared.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/')
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash))
  if (ip === undefined) return undefined
  const max = ip.version === 4 ? 32 : 128
  let prefix = max
  if (slash >= 0) {
    const digits = text.slice(slash + 1).trim()
    prefix = /^\d{1,3}$/.test(digits) ? Number(digits) : Number.NaN
    // The mapped form was written as IPv6, so its prefix counts 128 bits.
    const mapped = ip.version === 4 && text.indexOf(':') >= 0 && text.indexOf(':') < slash
    if (mapped) prefix -= 96
    if (!(prefix >= 0 && prefix <= max)) return undefined
  }
  return ip.version === 4
    ? { version: 4, network: (ip.value & maskV4(prefix)) >>> 0, prefix }
    : { version: 6, network: maskGroups(ip.groups, prefix), prefix }
}

/** True when `ip` lies inside `cidr`. Addresses of the other IP version never match. */
export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.version === 4) {
    return ip.version === 4 && (ip.value & maskV4(cidr.prefix)) >>> 0 === cidr.network
  }
  if (ip.version !== 6) return false
  for (let i = 0; i < 8; i++) {
    if ((ip.groups[i]! & groupMask(cidr.prefix, i)) !== cidr.network[i]) return false
  }
  return true
}

/** An address family a list of ranges can trust in full. */
export type IpFamily = 'IPv4' | 'IPv6'

/**
 * Compiles a list of addresses, CIDR ranges and range names into one membership test, once.
 * Throws `ERR_RL_INVALID_OPTION` naming `field` for an entry that is none of those.
 * `coveredFamilies` lists each family whose every address the ranges hold together (one
 * `0.0.0.0/0`, or `0.0.0.0/1` with `128.0.0.0/1`); `coversEverything` is true when there is one.
 */
export function createIpMatcher(
  entries: string | readonly string[],
  field = 'trustProxy',
): {
  readonly contains: (ip: IpAddress) => boolean
  readonly coversEverything: boolean
  readonly coveredFamilies: readonly IpFamily[]
} {
  const cidrs: Cidr[] = []
  for (const entry of typeof entries === 'string' ? entries.split(',') : entries) {
    const name = entry.trim()
    for (const text of namedRange(name) ?? [name]) {
      const cidr = parseCidr(text)
      if (cidr === undefined) {
        throw invalidOption(
          field,
          `${JSON.stringify(entry)} is not an IP address, a CIDR range or one of ${Object.keys(NAMED_RANGES).join(', ')}`,
        )
      }
      cidrs.push(cidr)
    }
  }
  const v4 = cidrs.filter((c) => c.version === 4)
  const v6 = cidrs.filter((c) => c.version === 6)
  const coveredFamilies: IpFamily[] = []
  if (coversFamily(v4, 32)) coveredFamilies.push('IPv4')
  if (coversFamily(v6, 128)) coveredFamilies.push('IPv6')
  return {
    coversEverything: coveredFamilies.length > 0,
    coveredFamilies,
    contains(ip) {
      const list = ip.version === 4 ? v4 : v6
      for (const cidr of list) if (cidrContains(cidr, ip)) return true
      return false
    },
  }
}

/** The ranges a name stands for, in any case; only the names listed, never `constructor` & co. */
function namedRange(name: string): readonly string[] | undefined {
  const key = name.toLowerCase()
  return Object.hasOwn(NAMED_RANGES, key) ? NAMED_RANGES[key] : undefined
}

/**
 * True when `cidrs` (all of one family, `bits` wide) together hold every address of it: taken in
 * order of their first address, none may start past the end of those before it, and together
 * they must reach the last address. Runs once per configuration, so bigints (IPv6 is 128 bits
 * wide) cost nothing on the request path.
 */
function coversFamily(cidrs: readonly Cidr[], bits: number): boolean {
  const spans = cidrs.map(span).sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0))
  let reached = 0n // every address below this one is covered
  for (const { first, size } of spans) {
    if (first > reached) return false
    if (first + size > reached) reached = first + size
  }
  return reached === 1n << BigInt(bits)
}

/** The first address of `cidr` as a number, and how many addresses it holds. */
function span(cidr: Cidr): { first: bigint; size: bigint } {
  const hostBits = BigInt((cidr.version === 4 ? 32 : 128) - cidr.prefix)
  let first = 0n
  if (cidr.version === 4) first = BigInt(cidr.network)
  else for (const group of cidr.network) first = (first << 16n) | BigInt(group)
  return { first, size: 1n << hostBits }
}

/** How many leading bits of an address identify one client. */
export type PrefixOptions = {
  /**
   * IPv4 clients are keyed by their full address by default; lower it (e.g. 24) to count a
   * whole subnet as one client. @default 32
   */
  readonly ipv4Prefix?: number | undefined
  /**
   * IPv6 clients are keyed by network: a single host usually owns a whole /64 and can rotate
   * through it. Use 56 or 48 where providers hand out larger blocks per customer. @default 64
   */
  readonly ipv6Prefix?: number | undefined
}

/**
 * The rate-limit key for an address: `203.0.113.7` for IPv4 (`203.0.113.0/24` with a prefix
 * below 32), the network for IPv6, e.g. `2001:db8:85a3:8d3::/64` (the bare address at 128).
 */
export function ipKey(ip: IpAddress, options: PrefixOptions = {}): string {
  const prefix = ip.version === 4 ? (options.ipv4Prefix ?? 32) : (options.ipv6Prefix ?? 64)
  return networkKey(ip, prefix) ?? formatIp(ip)
}

/**
 * The key of the network of `prefix` bits an address is in, `203.0.113.0/24`; none at the
 * address's full length (32, 128), where its own text is the key.
 */
export function networkKey(ip: IpAddress, prefix: number): string | undefined {
  return prefix === (ip.version === 4 ? 32 : 128) ? undefined : `${formatIp(ip, prefix)}/${prefix}`
}

/** Checks a prefix option at construction; throws `ERR_RL_INVALID_OPTION` naming the option. */
export function checkPrefix(field: string, value: number | undefined, max: number): void {
  if (value !== undefined) checkWhole(field, value, { min: 0, max })
}
