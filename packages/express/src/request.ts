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
import type { Request } from 'express'

/**
 * The authenticated user's id where Passport (and most Express auth middleware) leaves it:
 * `req.user`, itself an id or an object with an `id`.
 */
export function defaultUser(req: Request): UserId {
  return userIdOf((req as Request & { user?: unknown }).user)
}

/**
 * The full path the rules match on (the limiter drops the query string). `req.originalUrl`
 * rather than `req.path`, which is relative to where the middleware is mounted
 * (`app.use('/v1', …)`).
 */
export function pathOf(req: Request): string {
  return req.originalUrl || req.url
}

/** One per middleware: the identity source its requests' headers are read through. */
export function identitySource(): ReusedIdentitySource<IncomingHttpHeaders> {
  return new ReusedIdentitySource((fields, name) => fields[name])
}

/**
 * Maps an Express request to the limiter's input. The client address is the socket peer's:
 * forwarding headers are trusted only through Tollgate's own `trustProxy`, never through
 * Express's `trust proxy` setting, so both can be configured independently.
 */
export function requestFacts(
  req: Request,
  identitiesOf: Tollgate['requestIdentities'],
  read: RequestReaders<Request>,
  headers: ReusedIdentitySource<IncomingHttpHeaders>,
): RequestFacts {
  const user = read.user(req)
  const cut = headerListMayBeCut(req)
  const identities = headers.identities(
    identitiesOf,
    req.socket.remoteAddress,
    req.headers,
    user,
    cut,
  )
  return {
    method: req.method,
    path: pathOf(req),
    plan: read.plan?.(req),
    identities:
      read.identities === undefined ? identities : { ...identities, ...read.identities(req) },
  }
}
