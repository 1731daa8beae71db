import type { IncomingHttpHeaders } from 'node:http'
import {
  headerListMayBeCut,
  type RequestFacts,
  type RequestReaders,
  ReusedIdentitySource,
  type Tollgate,
  type UserId,
  userIdOf,
} from '@tollgate/core'
import type { Context } from 'koa'

/**
 * The authenticated user's id where koa-passport (and most Koa auth middleware) leaves it:
 * `ctx.state.user`, itself an id or an object with an `id`.
 */
export function defaultUser(ctx: Context): UserId {
  const state: { readonly user?: unknown } | undefined = ctx.state
  return userIdOf(state?.user)
}

/**
 * The full path the rules match on (the limiter drops the query string). `ctx.originalUrl`
 * rather than `ctx.path`, which koa-mount rewrites to be relative to the mount point.
 */
export function pathOf(ctx: Context): string {
  return ctx.originalUrl || ctx.url
}

/** One per middleware: the identity source its requests' headers are read through. */
export function identitySource(): ReusedIdentitySource<IncomingHttpHeaders> {
  return new ReusedIdentitySource((fields, name) => fields[name])
}

/**
 * Maps a Koa context to the limiter's input. The client address is the socket peer's:
 * forwarding headers are trusted only through Tollgate's own `trustProxy`, never through Koa's
 * `app.proxy`, so both can be configured independently.
 */
export function requestFacts(
  ctx: Context,
  identitiesOf: Tollgate['requestIdentities'],
  read: RequestReaders<Context>,
  headers: ReusedIdentitySource<IncomingHttpHeaders>,
): RequestFacts {
  const user = read.user(ctx)
  const identities = headers.identities(
    identitiesOf,
    ctx.req.socket.remoteAddress,
    ctx.req.headers,
    user,
    headerListMayBeCut(ctx.req),
  )
  return {
    method: ctx.method,
    path: pathOf(ctx),
    plan: read.plan?.(ctx),
    identities:
      read.identities === undefined ? identities : { ...identities, ...read.identities(ctx) },
  }
}
