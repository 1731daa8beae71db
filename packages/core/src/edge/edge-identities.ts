import { type HeaderAccessor, headerText } from '../headers/types.js'
import { forwardingHeaderCheck } from '../identity/forwarding-header-check.js'
import type { WarningOptions, WarnOnce } from '../warnings.js'
import { DOTTED_QUAD, edgeIpKey, edgeParseIp } from './edge-ip.js'
import { invalidOption } from './edge-options.js'
import { ELSEWHERE_PROBLEM } from './edge-rules.js'

/** The identity options the edge entry takes (a client facing it directly: no proxies). */
export type EdgeIdentityOptions = WarningOptions & {
  /** Only `false` (the default): the edge entry reads no forwarding header. */
  readonly trustProxy?: false | undefined
  /** The network a client's IPv4 address is keyed by, in bits. @default 32 */
  readonly ipv4Prefix?: number | undefined
  /** The network a client's IPv6 address is keyed by, in bits. @default 64 */
  readonly ipv6Prefix?: number | undefined
  /** The request header that carries an API key, or `false`. @default 'x-api-key' */
  readonly apiKeyHeader?: string | false | undefined
  /** Also take the API key from `Authorization: Bearer <token>`. @default false */
  readonly bearerAsApiKey?: boolean | undefined
  /** Longer API keys are treated as absent. @default 256 */
  readonly maxApiKeyLength?: number | undefined
}

/** A request's built-in identities, as `createIdentityResolver` finds them with no proxy. */
export type EdgeIdentities = (
  socketAddress: string | undefined,
  header: HeaderAccessor,
  user: string | number | null | undefined,
) => { ip: string | undefined; api_key: string | undefined; user: string | undefined }

/**
 * The identities of `compileIdentities` for an app that trusts no proxy, with the same keys
 * (IPv4 in full, IPv6 by network), API keys and warnings, without the proxy walk. `readsApiKey`:
 * false when no rule keys on `api_key` (no header is read).
 */
export function edgeIdentities(
  options: EdgeIdentityOptions,
  readsApiKey: boolean,
  warn: WarnOnce,
): EdgeIdentities {
  // Settings that trust no proxy pass: false, 0, an empty string or list.
  const trust = options.trustProxy as unknown
  const trusts =
    typeof trust === 'string' ? trust.trim() : Array.isArray(trust) ? trust.length : trust
  if (trusts !== undefined && trusts !== false && trusts !== 0 && trusts !== '') {
    throw invalidOption('trustProxy', ELSEWHERE_PROBLEM)
  }
  // Whole numbers in range (checkEdgeOptions).
  const v4Prefix = options.ipv4Prefix ?? 32
  const v6Prefix = options.ipv6Prefix ?? 64
  if (v6Prefix > 64) {
    warn(
      'WARN_IPV6_UNMASKED',
      `ipv6Prefix ${v6Prefix} > 64: a host owning a /64 can rotate addresses past its limit`,
    )
  }
  const given = options.apiKeyHeader ?? 'x-api-key'
  if (given !== false && !/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(given)) {
    throw invalidOption('apiKeyHeader', `${JSON.stringify(given)} is not a header name`)
  }
  const apiKeyHeader = readsApiKey && given !== false ? given.toLowerCase() : undefined
  const bearer = readsApiKey && options.bearerAsApiKey === true
  const maxLength = options.maxApiKeyLength ?? 256
  const v4Full = v4Prefix === 32
  const checkForwardingHeaders = forwardingHeaderCheck(() =>
    warn(
      'WARN_FORWARDED_HEADERS_IGNORED',
      'a request carried X-Forwarded-For or Forwarded, which the edge entry never reads: behind a proxy all clients share its key',
    ),
  )

  function ipOf(address: string | undefined, header: HeaderAccessor): string | undefined {
    const quad = v4Full && address !== undefined && DOTTED_QUAD.test(address)
    const ip = quad || address === undefined ? undefined : edgeParseIp(address)
    if (!quad && ip === undefined) {
      warn(
        'WARN_CLIENT_ADDRESS_UNKNOWN',
        `the socket address ${JSON.stringify(address)} is not an IP address: requests have no "ip" identity (pass getConnInfo)`,
      )
      return undefined
    }
    checkForwardingHeaders(header)
    if (ip === undefined) return address
    return edgeIpKey(ip, ip.version === 4 ? v4Prefix : v6Prefix)
  }

  function apiKeyOf(header: HeaderAccessor): string | undefined {
    let key = apiKeyHeader === undefined ? undefined : headerText(header(apiKeyHeader))?.trim()
    if (!key && bearer) {
      // `Authorization: Bearer <token>`, the scheme in any case.
      const value = headerText(header('authorization'))?.trim() ?? ''
      if (value.length >= 8 && /^bearer[ \t]/i.test(value)) key = value.slice(7).trim()
    }
    return !key || key.length > maxLength ? undefined : key
  }

  return (address, header, user) => ({
    ip: ipOf(address, header),
    api_key: apiKeyOf(header),
    user: user === undefined || user === null || user === '' ? undefined : String(user),
  })
}
