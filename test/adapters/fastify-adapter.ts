// The Fastify adapter of docs/adapters/writing-an-adapter.md, as the guide builds it with the
// adapter kit; adapters.test.ts runs it through the same scenario table as Express, Koa and Hono.
import type { CoreOptions, Denial, Limiter, RequestHooks, RuleConfig } from '@tollgate/core'
import {
  createAdapterKit,
  type FieldSink,
  type FieldWriter,
  type Framework,
  isPromise,
  isSingleValuedName,
  type Pass,
  userIdOf,
} from '@tollgate/core/adapter'
import { endWhenFinished } from '@tollgate/core/node'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

const fastify: Framework<FastifyRequest> = {
  method: (request) => request.method,
  path: (request) => request.url,
  socketAddress: (request) => request.socket.remoteAddress,
  header: (request, name) => request.headers[name],
  user: (request) => userIdOf((request as FastifyRequest & { user?: unknown }).user),
}

/** A list field the reply already has gets the value appended; any other is set. */
function put(reply: FastifyReply, name: string, value: string): void {
  const present = isSingleValuedName(name) ? undefined : reply.getHeader(name)
  reply.header(name, present === undefined ? value : `${present}, ${value}`)
}

const fields: FieldSink<FastifyReply> = {
  putEntries(reply, entries) {
    for (const [name, value] of entries) put(reply, name, value)
  },
  putVerdict(reply, verdict, write) {
    const writer: FieldWriter = { write: (name, value) => put(reply, name, value) }
    write(verdict, writer)
  },
}

export type FastifyRateLimitOptions = CoreOptions &
  RequestHooks<FastifyRequest> & {
    readonly onLimited?: (request: FastifyRequest, reply: FastifyReply, denial: Denial) => unknown
  }

/** An `onRequest` hook: `app.addHook('onRequest', rateLimit(rules))`. */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: FastifyRateLimitOptions = {},
) {
  const kit = createAdapterKit<FastifyRequest, FastifyReply>(rules, options, fastify)
  // A Buffer, as Fastify would add a charset to the problem body's Content-Type for a string.
  const onLimited =
    options.onLimited ??
    ((_request, reply, denial) => reply.code(denial.status).send(Buffer.from(denial.body)))

  function finish(pass: Pass<FastifyRequest, FastifyReply>, done: HookHandlerDoneFunction) {
    pass.writeFields(fields, pass.res)
    if (pass.denial === undefined) {
      if (kit.watchesEnd) endWhenFinished(pass.res.raw, pass)
      return done()
    }
    // A hook that answers does not call done(); a rejected answer goes to Fastify's handler.
    const answered = onLimited(pass.req, pass.res, pass.denial)
    if (isPromise(answered)) answered.then(undefined, done)
  }

  return function tollgate(
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    const pass = kit.enter(request, reply)
    if (pass === undefined) return done()
    const ready = pass.ready
    if (!isPromise(ready)) return finish(ready, done)
    ready.then((decided) => finish(decided, done)).catch(done)
  }
}
