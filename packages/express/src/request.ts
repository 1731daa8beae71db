import type { Framework } from '@tollgate/core/adapter'
import { userIdOf } from '@tollgate/core/adapter'
import { closeSignal, eventLoopDelay, headerListMayBeCut } from '@tollgate/core/node'
import type { Request } from 'express'

/**
 * How the kit reads an Express request. The path is `req.originalUrl`, the full one, rather than
 * `req.path`, which is relative to where the middleware is mounted (`app.use('/v1', …)`). The
 * client address is the socket peer's: forwarding headers are trusted only through Tollgate's own
 * `trustProxy`, never through Express's `trust proxy` setting, so both can be set apart. The
 * user is where Passport (and most Express auth middleware) leaves it, `req.user`.
 */
export const express: Framework<Request> = {
  method: (req) => req.method,
  path: (req) => req.originalUrl || req.url,
  socketAddress: (req) => req.socket.remoteAddress,
  header: (req, name) => req.headers[name],
  user: (req) => userIdOf((req as Request & { user?: unknown }).user),
  headersCut: headerListMayBeCut,
  disconnected: (req) => closeSignal(req.res!),
  eventLoopDelay,
}
