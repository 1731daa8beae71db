import type { Framework } from '@tollgate/core/adapter'
import { closeSignal, eventLoopDelay } from '@tollgate/core/node'
import type { Context } from 'koa'

/**
 * How the kit reads a Koa context. The path is `ctx.originalUrl`, the full one, rather than
 * `ctx.path`, which koa-mount rewrites to be relative to the mount point. The client address is
 * the socket peer's: forwarding headers are trusted only through Tollgate's own `trustProxy`,
 * never through Koa's `app.proxy`, so both can be set apart. The user is where koa-passport (and
 * most Koa auth middleware) leaves it, `ctx.state.user`.
 */
export const koa: Framework<Context> = {
  name: 'Koa',
  method: (ctx) => ctx.method,
  path: (ctx) => ctx.originalUrl || ctx.url,
  socketAddress: (ctx) => ctx.req.socket.remoteAddress,
  header: (ctx, name) => ctx.req.headers[name],
  user: (ctx) => (ctx.state as { readonly user?: unknown } | undefined)?.user,
  incoming: (ctx) => ctx.req,
  disconnected: (ctx) => closeSignal(ctx.res),
  eventLoopDelay,
}
