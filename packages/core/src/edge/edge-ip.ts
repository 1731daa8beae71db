import { formatIp, type IpAddress } from '../identity/ip.js'

// `parseIp` in fewer bytes, for the edge entry: the same addresses accepted (edge-ip.test.ts
// compares the two on random text), by regular expressions rather than a character scanner.

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)'
/** A strict dotted quad: four parts 0–255, no leading zeros (some parsers read those as octal). */
export const DOTTED_QUAD = /* @__PURE__ */ new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`)
/** A port after an address: 1–5 digits, or RFC 7239's obfuscated `_…`. */
const PORT = /^(:(\d{1,5}|_[\w.-]+))?$/

/**
 * Parses an address as `parseIp` does: IPv4 or IPv6 (`::`, an IPv4 tail, a zone id), in brackets
 * or with a port; an IPv4-mapped IPv6 address as the IPv4 address it carries.
 */
export function edgeParseIp(text: string): IpAddress | undefined {
  const s = text.trim()
  if (s === '' || s.length > 100) return undefined
  if (s[0] === '[') {
    const close = s.indexOf(']')
    return close > 0 && PORT.test(s.slice(close + 1)) ? ipv6(s.slice(1, close)) : undefined
  }
  const colon = s.indexOf(':')
  if (colon >= 0 && s.indexOf(':', colon + 1) >= 0) return ipv6(s)
  const port = colon < 0 ? '' : s.slice(colon)
  const value = PORT.test(port) ? ipv4(colon < 0 ? s : s.slice(0, colon)) : undefined
  return value === undefined ? undefined : { version: 4, value }
}

function ipv4(s: string): number | undefined {
  const parts = DOTTED_QUAD.exec(s)
  return parts === null ? undefined : parts.slice(1).reduce((value, part) => value * 256 + +part, 0)
}

function ipv6(input: string): IpAddress | undefined {
  const percent = input.indexOf('%')
  const zone = percent < 0 ? undefined : input.slice(percent + 1)
  let s = percent < 0 ? input : input.slice(0, percent)
  if (zone === '') return undefined
  // An IPv4 tail is read as the two groups it fills.
  const last = s.lastIndexOf(':')
  if (s.includes('.')) {
    const v4 = ipv4(s.slice(last + 1))
    if (v4 === undefined) return undefined
    s = `${s.slice(0, last + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const [head, tail] = halves.map((half) => (half === '' ? [] : half.split(':')))
  const groups = [...head!, ...(tail ?? [])]
  if (!groups.every((group) => /^[\da-f]{1,4}$/i.test(group))) return undefined
  const numbers = groups.map((group) => Number.parseInt(group, 16))
  if (tail === undefined ? numbers.length !== 8 : numbers.length > 7) return undefined
  if (tail !== undefined) numbers.splice(head!.length, 0, ...new Array(8 - numbers.length).fill(0))
  const mapped = numbers[5] === 0xffff && numbers.slice(0, 5).every((group) => group === 0)
  return mapped
    ? { version: 4, value: numbers[6]! * 65536 + numbers[7]! }
    : { version: 6, groups: numbers, zone }
}

/**
 * `ipKey` for the edge entry: the address's network at `prefix` bits as `formatIp` writes it,
 * with `/prefix` (the address itself at 32 or 128 bits).
 */
export function edgeIpKey(ip: IpAddress, prefix: number): string {
  if (prefix === (ip.version === 4 ? 32 : 128)) return formatIp(ip)
  const network: IpAddress =
    ip.version === 4
      ? { version: 4, value: prefix === 0 ? 0 : (ip.value & (0xffffffff << (32 - prefix))) >>> 0 }
      : {
          version: 6,
          groups: ip.groups.map(
            (group, i) =>
              group & (0xffff << (16 - Math.min(16, Math.max(0, prefix - 16 * i)))) & 0xffff,
          ),
          zone: undefined,
        }
  return `${formatIp(network)}/${prefix}`
}
