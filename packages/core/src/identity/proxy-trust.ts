import { type HeaderAccessor, headerText } from '../headers/types.js'
import { headerListMayBeCut, type NodeIncomingHeaders } from '../node/node-header-limit.js'
import type { WarnOnce } from '../warnings.js'
import { parseForwarded, parseXForwardedFor } from './forwarded.js'
import { type IpAddress, parseIp, type UntrustedForwarding, untrustedForwarding } from './ip.js'
import { checkPrefix, createIpMatcher } from './ip-prefix.js'

/**
 * Which proxies may tell us who the client is.
 * - `false` (or `0`, an empty list, an empty string): none; the socket peer is the client and
 *   forwarding headers are ignored.
 * - a list of addresses, CIDR ranges and range names (`'loopback'`, `'linklocal'`,
 *   `'private'`), as an array or one comma-separated string: the header is walked from the
 *   right and the first address outside the list is the client. A list whose ranges cover every
 *   IPv4 or every IPv6 address warns `WARN_TRUST_ALL_PROXIES`.
 * - a number `n`: exactly `n` proxies stand in front of the app (the socket peer is the first),
 *   so the client is the address `n` hops to the left of the socket.
 * - `true`: every hop is trusted, so the left-most address (which the client itself can write)
 *   is used. Warns `WARN_TRUST_ALL_PROXIES`.
 */
export type TrustProxy = boolean | number | string | readonly string[]

/** Who sent a request, as far as the trusted proxies can tell. */
export type ClientAddress = {
  /** The client's address in canonical text, e.g. `203.0.113.7` or `2001:db8::1`. */
  readonly ip: string
  /** The rate-limit key: the full IPv4 address or the IPv6 network, e.g. `2001:db8::/64`. */
  readonly key: string
  /** How many trusted proxies the request came through; 0 when the socket peer is the client. */
  readonly hops: number
}

/**
 * Who a request's client is behind the trusted proxies, from the socket peer (already parsed)
 * and the forwarding header; `result` makes the address from the client found and its hops.
 * `incoming`: the Node request it was read from; when its header list may have been cut (see
 * `headerListMayBeCut`), its forwarding header is not trusted, as if absent, since the line a
 * trusted proxy added may be the one dropped; warns `WARN_HEADERS_TRUNCATED` once.
 */
type ForwardedClient = (
  socket: IpAddress,
  header: HeaderAccessor,
  incoming?: Partial<NodeIncomingHeaders> | undefined,
) => ClientAddress

/**
 * Reads one header of a request by its lower-case name: the framework's own accessor, given the
 * request, so that resolving a client makes no closure per request.
 */
export type HeaderReader<Source> = (source: Source, name: string) => ReturnType<HeaderAccessor>

/**
 * Compiles a `trustProxy` setting that trusts some proxy (never `false`, `0` or an empty list:
 * those read no forwarding header) into the walk of the forwarding header; `untrusted` makes the
 * watch of a setting that trusts none (`WARN_FORWARDED_HEADERS_IGNORED`).
 */
export type ProxyTrust = {
  (
    trustProxy: TrustProxy,
    proxyHeader: 'x-forwarded-for' | 'forwarded',
    warn: WarnOnce,
    result: (client: IpAddress, hops: number) => ClientAddress,
  ): ForwardedClient
  /**
   * The watch of a resolver that trusts no proxy: warns `WARN_FORWARDED_HEADERS_IGNORED` when a
   * request carries forwarding headers that some proxy in front would have written.
   * @default none: forwarding headers are not watched for
   */
  readonly untrusted?: ((warn: WarnOnce) => UntrustedForwarding) | undefined
}

type CompiledTrust = {
  /** `hop` 0 is the socket peer, 1 the right-most forwarded entry, and so on. */
  readonly isTrusted: (ip: IpAddress, hop: number) => boolean
  readonly hopCount: number | undefined
}

/**
 * The forwarding headers read as `trustProxy` says: the header is walked from the right, and the
 * first address that no trusted proxy wrote is the client. While no proxy is trusted, they are
 * watched for instead (`untrusted`): a middleware composed without this part reads none.
 */
// Made without a statement of its own (pure), so that a bundle that does not use it drops it
// even from a chunk that holds other modules' code (the packages' dist).
export const trustedProxies: ProxyTrust = /* @__PURE__ */ Object.assign(walkForwarded, {
  // The watch of a setting that trusts none: its code is in ip.ts, which the requests it watches
  // already run.
  untrusted: untrustedForwarding,
})

function walkForwarded(
  trustProxy: TrustProxy,
  proxyHeader: 'x-forwarded-for' | 'forwarded',
  warn: WarnOnce,
  result: (client: IpAddress, hops: number) => ClientAddress,
): ForwardedClient {
  const trust = compileTrust(trustProxy, warn)
  const readChain =
    proxyHeader === 'forwarded'
      ? (text: string) => parseForwarded(text)
      : (text: string) => parseXForwardedFor(text)
  return (socket, header, incoming) => {
    const cut = headerListMayBeCut(incoming)
    if (cut) {
      warn(
        'WARN_HEADERS_TRUNCATED',
        "a request's headers reached the server's maxHeadersCount, so its forwarding header was not trusted (Node may have dropped the proxy's line); raise maxHeadersCount if real clients send that many",
      )
    }
    if (!trust.isTrusted(socket, 0)) return result(socket, 0)
    const text = cut ? undefined : headerText(header(proxyHeader))
    const chain = text === undefined ? [] : readChain(text)
    let client = socket
    let hops = 0
    for (let i = chain.length - 1; i >= 0; i--) {
      const entry = chain[i]
      const next = entry === undefined ? undefined : parseIp(entry)
      // A trusted proxy wrote this entry; if it is not an address, the proxy did not know the
      // client, and the proxy itself is the best key we have (never a client-chosen one).
      if (next === undefined) return result(client, hops)
      client = next
      hops++
      if (!trust.isTrusted(next, hops)) return result(client, hops)
    }
    if (trust.hopCount !== undefined && hops < trust.hopCount) {
      warn(
        'WARN_HOP_COUNT_EXCEEDS_CHAIN',
        `trustProxy is ${trust.hopCount} but a request came through ${hops} hop(s), so its left-most address may be forged; check the count or list your proxies' addresses`,
      )
    }
    return result(client, hops)
  }
}

function compileTrust(trustProxy: TrustProxy, warn: WarnOnce): CompiledTrust {
  if (trustProxy === true) {
    warnTrustAll(warn, 'trustProxy is true')
    return { isTrusted: () => true, hopCount: undefined }
  }
  if (typeof trustProxy === 'number') {
    checkPrefix('trustProxy', trustProxy, Number.MAX_SAFE_INTEGER)
    return { isTrusted: (_ip, hop) => hop < trustProxy, hopCount: trustProxy }
  }
  const matcher = createIpMatcher(trustProxy as string | readonly string[])
  if (matcher.coversEverything) {
    const families = matcher.coveredFamilies.join(' and ')
    warnTrustAll(warn, `trustProxy covers every ${families} address`)
  }
  return { isTrusted: (ip) => matcher.contains(ip), hopCount: undefined }
}

function warnTrustAll(warn: WarnOnce, what: string): void {
  warn(
    'WARN_TRUST_ALL_PROXIES',
    `${what}: any client can pick its key by sending X-Forwarded-For; list your proxies' addresses or give their number`,
  )
}
