import type { IncomingHttpHeaders } from 'node:http'
import type {
  HeaderAccessor,
  Identities,
  RequestFacts,
  RequestReaders,
  Tollgate,
  UserId,
} from '@tollgate/core'
import type { Request } from 'express'

/**
 * The authenticated user's id where Passport (and most Express auth middleware) leaves it:
 * `req.user`, itself an id or an object with an `id`.
 */
export function defaultUser(req: Request): UserId {
  const user = (req as Request & { user?: unknown }).user
  if (typeof user === 'string' || typeof user === 'number') return user
  if (typeof user === 'object' && user !== null) {
    const id = (user as { id?: unknown }).id
    if (typeof id === 'string' || typeof id === 'number') return id
  }
  return undefined
}

/**
 * The full path the rules match on, without the query string. `req.originalUrl` rather than
 * `req.path`, which is relative to where the middleware is mounted (`app.use('/v1', …)`).
 */
export function pathOf(req: Request): string {
  const url = req.originalUrl || req.url
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/**
 * One header accessor and one identity source for every request of a middleware, filled with
 * the request whose identities are being resolved: core reads them only while
 * `requestIdentities` runs, synchronously, so objects and closures per request (garbage on
 * every request) are not needed.
 */
export class RequestHeaders {
  private fields: IncomingHttpHeaders = {}
  readonly header: HeaderAccessor = (name) => this.fields[name]
  private readonly source: {
    socketAddress: string | undefined
    header: HeaderAccessor
    user: UserId
  } = { socketAddress: undefined, header: this.header, user: undefined }

  /** A request's identities, its headers read from `fields` (until the next call). */
  identities(
    identitiesOf: Tollgate['requestIdentities'],
    socketAddress: string | undefined,
    fields: IncomingHttpHeaders,
    user: UserId,
  ): Identities {
    this.fields = fields
    const source = this.source
    source.socketAddress = socketAddress
    source.user = user
    const identities = identitiesOf(source)
    source.socketAddress = undefined
    source.user = undefined
    return identities
  }
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
  headers: RequestHeaders,
): RequestFacts {
  const user = read.user(req)
  const identities = headers.identities(identitiesOf, req.socket.remoteAddress, req.headers, user)
  return {
    method: req.method,
    path: pathOf(req),
    plan: read.plan?.(req),
    identities:
      read.identities === undefined ? identities : { ...identities, ...read.identities(req) },
  }
}
