import { type HeaderAccessor, headerText } from '../headers/types.js'
import type { NodeIncomingHeaders } from '../node/node-header-limit.js'
import {
  checkOptionValues,
  type OptionKind,
  orNull,
  shown,
  whole,
} from '../options/option-values.js'
import {
  CLIENT_IP_KINDS,
  type ClientAddress,
  type ClientIp,
  type ClientIpOptions,
  compileClientIp,
  type HeaderReader,
} from './client-ip.js'
import { trustedProxies } from './proxy-trust.js'

/** The client-IP options plus where API keys come from. */
export type IdentityOptions = ClientIpOptions & {
  /**
   * The request header that carries an API key, or `false` to never read one. Change it to
   * match your API (`x-goog-api-key`, `api-key`…). @default 'x-api-key'
   */
  readonly apiKeyHeader?: string | false | undefined
  /**
   * Also take the API key from `Authorization: Bearer <token>` when the API-key header is
   * absent. Off by default: bearer tokens are often short-lived (a new bucket on each refresh)
   * and, before authentication has run, any client can invent one. Turn it on when your bearer
   * tokens are long-lived API keys. @default false
   */
  readonly bearerAsApiKey?: boolean | undefined
  /**
   * Longer API keys are treated as absent, so a client cannot make the limiter store huge keys.
   * @default 256
   */
  readonly maxApiKeyLength?: number | undefined
}

/** A user id as authentication middleware leaves it; anything else counts as no user. */
export type UserId = string | number | null | undefined

/**
 * The user id in what auth middleware stores for a request (Passport's `req.user`, koa-passport's
 * `ctx.state.user`, Hono's `c.get('user')`): an id itself, or an object with an `id`. Anything
 * else is no user.
 */
export function userIdOf(user: unknown): UserId {
  const id = typeof user === 'object' && user !== null ? (user as { id?: unknown }).id : user
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

/** What an adapter knows about a request before the limiter runs. */
export type IdentitySource = {
  /** The socket peer's address (`req.socket.remoteAddress`, Hono `getConnInfo(c).remote.address`). */
  readonly socketAddress: string | undefined
  readonly header: HeaderAccessor
  /** The authenticated user's id, as the framework stores it; absent before authentication. */
  readonly user?: UserId
  /**
   * True when the header list may have been cut (Node's `maxHeadersCount`, see
   * `headerListMayBeCut`): forwarding headers are then not trusted, as if absent, since the
   * line a trusted proxy added may be the one dropped. Warns `WARN_HEADERS_TRUNCATED` once.
   */
  readonly headersCut?: boolean | undefined
}

/** The identities Tollgate derives; rules key on them by name. */
export type Identities = {
  /** The client's IP key (IPv6 by network), resolved through trusted proxies only. */
  readonly ip: string | undefined
  readonly api_key: string | undefined
  readonly user: string | undefined
}

/** The compiled resolver: one call per request. */
export type IdentityResolver = {
  /** The `RequestFacts.identities` of a request. */
  readonly identities: (source: IdentitySource) => Identities
  /** The client address alone, for logs or for rules of your own. */
  readonly clientIp: (
    socketAddress: string | undefined,
    header: HeaderAccessor,
  ) => ClientAddress | undefined
}

/**
 * Compiles the key options once. Composite keys (per account and per IP) are built by the
 * limiter from these identities; a missing identity stays `undefined` so the limiter's
 * `onMissingIdentity` policy can fall back to the IP or refuse.
 * @example
 * const resolver = createIdentityResolver({ trustProxy: 'loopback', apiKeyHeader: 'x-api-key' })
 * const identities = resolver.identities({
 *   socketAddress: req.socket.remoteAddress,
 *   header: (name) => req.headers[name],
 *   user: req.user?.id,
 * }) // { ip: '203.0.113.7', api_key: 'k_123', user: undefined }
 */
export function createIdentityResolver(options: IdentityOptions = {}): IdentityResolver {
  checkOptionValues(options, CLIENT_IP_KINDS)
  // Its options checked after the client IP's, before `trustProxy` is read.
  const apiKey = apiKeyIdentity(options, readSourceHeader, true)
  const clientIp = compileClientIp(options, trustedProxies)
  const resolve = compileIdentities<IdentitySource>(readSourceHeader, clientIp, apiKey, (source) =>
    source.headersCut === true ? CUT : undefined,
  )
  return {
    clientIp: clientIp.address,
    identities: (source) => resolve(source, source.socketAddress, source.user),
  }
}

/**
 * A Node request whose header list reads as cut (`headerListMayBeCut`): no server's limit is
 * above its length.
 */
const CUT: Partial<NodeIncomingHeaders> = { rawHeaders: { length: Infinity } as readonly string[] }

function readSourceHeader(source: IdentitySource, name: string): ReturnType<HeaderAccessor> {
  return source.header(name)
}

/**
 * What the API-key options' values must be, checked in this order by `apiKeyIdentity`
 * (`checkOptionValues`; the client IP's are `CLIENT_IP_KINDS`). A `maxApiKeyLength` of null
 * reads as the default.
 */
const API_KEY_KINDS = {
  // Only text: \`null\` would pass the pattern as "null", and fail as it is read.
  apiKeyHeader: (value) =>
    value === false || (typeof value === 'string' && /^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(value))
      ? undefined
      : `${shown(value)} is not a header name`,
  maxApiKeyLength: /* @__PURE__ */ orNull(/* @__PURE__ */ whole({ min: 1 })),
} satisfies { readonly [K in keyof IdentityOptions]?: OptionKind }

/** The names of the options `apiKeyIdentity` reads, refused by a middleware composed without it. */
export const API_KEY_OPTIONS = ['apiKeyHeader', 'bearerAsApiKey', 'maxApiKeyLength'] as const

/** The `api_key` of a request read from `source`, or undefined when it has none. */
export type ApiKeyReader<Source> = (source: Source) => string | undefined

/**
 * Reading the `api_key` identity (the `apiKeys` part of `createRateLimit`; `rateLimit` has it):
 * checks the API-key options (`apiKeyHeader`, `bearerAsApiKey`, `maxApiKeyLength`) and returns
 * how a request's key is read with `read`, or undefined when nothing reads one: no rule or list
 * keys on it (`keysOn` false; reading a header is a real cost on fetch runtimes), or there is
 * neither a header nor bearer tokens to read it from. `keysOn` undefined: any rule may (a
 * limiter of the app's own).
 */
export function apiKeyIdentity<Source>(
  options: IdentityOptions,
  read: HeaderReader<Source>,
  keysOn: boolean | undefined,
): ApiKeyReader<Source> | undefined {
  checkOptionValues(options, API_KEY_KINDS)
  const apiKeyHeader = options.apiKeyHeader === undefined ? 'x-api-key' : options.apiKeyHeader
  const headerName = apiKeyHeader === false ? false : apiKeyHeader.toLowerCase()
  const bearer = options.bearerAsApiKey ?? false
  const maxLength = options.maxApiKeyLength ?? 256
  if (keysOn === false || (headerName === false && !bearer)) return undefined
  return (source) => {
    let key = headerName === false ? undefined : headerText(read(source, headerName))?.trim()
    if ((key === undefined || key === '') && bearer)
      key = bearerToken(headerText(read(source, 'authorization')))
    return key === undefined || key === '' || key.length > maxLength ? undefined : key
  }
}

/**
 * A request's identities: `source` is what `read` reads its headers from; `user`, what its
 * framework's auth middleware left or the app's `user` hook returned (see `userIdOf`).
 */
export type RequestIdentities<Source> = (
  source: Source,
  socketAddress: string | undefined,
  user: unknown,
) => Identities

/**
 * The identities of a middleware's requests, read straight from the framework's request with
 * `read`: one call per request, with no object or closure made for it. The client's key is
 * `clientIp`'s (`compileClientIp` of options already checked: `CLIENT_IP_KINDS`); `api_key` is
 * `apiKey`'s (`apiKeyIdentity`), none when undefined; `incoming` gives the Node request the
 * source was read from, whose header list Node may have cut (`headerListMayBeCut`), asked only
 * when forwarding headers are trusted, the only time it matters (by default, never cut).
 */
export function compileIdentities<Source>(
  read: HeaderReader<Source>,
  clientIp: ClientIp,
  apiKey: ApiKeyReader<Source> | undefined,
  incoming?: ((source: Source) => Partial<NodeIncomingHeaders> | undefined) | undefined,
): RequestIdentities<Source> {
  function identities(source: Source, socketAddress: string | undefined, user: unknown) {
    // Read only when a rule keys on the user (`user` is undefined otherwise): no call per request.
    const id = user === undefined ? undefined : userIdOf(user)
    return {
      ip: clientIp.key(socketAddress, source, read, incoming),
      api_key: apiKey?.(source),
      user: id === undefined || id === null || id === '' ? undefined : String(id),
    }
  }
  return identities
}

/**
 * The token of `Authorization: Bearer <token>`: the scheme matched without regard to case, then a
 * space or a tab, then the token (the value and the token trimmed).
 */
function bearerToken(authorization: string | undefined): string | undefined {
  return /^bearer[ \t](.*)/is.exec(authorization?.trim() ?? '')?.[1]?.trim()
}
