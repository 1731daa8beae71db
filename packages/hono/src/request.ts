import {
  headerListMayBeCut,
  type NodeIncomingHeaders,
  type RequestFacts,
  type RequestReaders,
  ReusedIdentitySource,
  type Tollgate,
  type UserId,
  userIdOf,
} from '@tollgate/core'
import type { Context, HonoRequest } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'

/** How the middleware reads a request: the defaults below, or the app's own functions. */
export type HonoReaders = RequestReaders<Context> & {
  readonly address: (c: Context) => string | undefined
}

/**
 * The authenticated user's id where Hono auth middleware usually leaves it: `c.get('user')`,
 * itself an id or an object with an `id`.
 */
export function defaultUser(c: Context): UserId {
  return userIdOf(c.get('user' as never))
}

/** What the runtimes put in `c.env` (the fetch handler's second argument). */
type RuntimeEnv = {
  /** @hono/node-server: the Node request (or, with `server`, the bindings hold it). */
  readonly incoming?: {
    readonly socket?: { readonly remoteAddress?: string }
    readonly rawHeaders?: readonly string[]
  }
  readonly server?: {
    readonly incoming?: { readonly socket?: { readonly remoteAddress?: string } }
  }
  /** Bun: the server. */
  readonly requestIP?: (request: Request) => { readonly address?: string } | null
  /** Deno: `Deno.serve`'s handler info. */
  readonly remoteAddr?: { readonly hostname?: string }
}

/**
 * The client's address on the runtimes Hono usually runs on, without importing any of them:
 * Node (@hono/node-server), Bun, Deno, and Cloudflare Workers, whose `CF-Connecting-IP` is read
 * only when the request carries Cloudflare's `cf` object (elsewhere any client could send that
 * header). Pass `getConnInfo` for any other runtime.
 */
export function defaultAddress(c: Context): string | undefined {
  const env = c.env as RuntimeEnv | undefined
  if (env !== undefined && env !== null) {
    const incoming = env.incoming ?? env.server?.incoming
    if (incoming !== undefined) return incoming.socket?.remoteAddress
    if (typeof env.requestIP === 'function') return env.requestIP(c.req.raw)?.address
    if (env.remoteAddr !== undefined) return env.remoteAddr.hostname
  }
  const raw = c.req.raw as Request & { readonly cf?: unknown }
  return raw.cf === undefined ? undefined : (c.req.header('cf-connecting-ip') ?? undefined)
}

/** `getConnInfo` (from `hono/bun`, `@hono/node-server/conninfo`…) as an address reader. */
export function addressFrom(getConnInfo: GetConnInfo): (c: Context) => string | undefined {
  return (c) => getConnInfo(c).remote.address
}

/** One per middleware: the identity source its requests' headers are read through. */
export function identitySource(): ReusedIdentitySource<HonoRequest> {
  return new ReusedIdentitySource((request, name) => request.header(name))
}

/** Maps a Hono context to the limiter's input; forwarding headers are core's to trust or not. */
export function requestFacts(
  c: Context,
  identitiesOf: Tollgate['requestIdentities'],
  read: HonoReaders,
  headers: ReusedIdentitySource<HonoRequest>,
): RequestFacts {
  const req = c.req
  const socketAddress = read.address(c)
  const user = read.user(c)
  // On @hono/node-server the Request was built from Node's header list, which may be cut.
  const incoming = (c.env as RuntimeEnv | undefined)?.incoming
  const cut =
    incoming?.rawHeaders !== undefined && headerListMayBeCut(incoming as NodeIncomingHeaders)
  const identities = headers.identities(identitiesOf, socketAddress, req, user, cut)
  return {
    method: req.method,
    path: req.path,
    plan: read.plan?.(c),
    identities:
      read.identities === undefined ? identities : { ...identities, ...read.identities(c) },
  }
}
