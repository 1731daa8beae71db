// The Fastify adapter that docs/adapters/writing-an-adapter.md builds with the adapter kit, as
// the guide shows it; adapters.test.ts runs it through the scenario table of the other three.
import type { CoreOptions, Limiter, RequestHooks, RuleConfig } from '@tollgate/core'
import * as kit from '@tollgate/core/adapter'
import { endWhenFinished, meterNodeBody } from '@tollgate/core/node'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

type Exchange = kit.Exchange<FastifyRequest, FastifyReply>

const fastify: kit.Framework<FastifyRequest> = {
  method: (request) => request.method,
  path: (request) => request.url,
  socketAddress: (request) => request.socket.remoteAddress,
  header: (request, name) => request.headers[name],
  user: (request) => (request as { user?: unknown }).user,
}

/** A list field the reply already has gets the value appended; any other is set. */
function put(reply: FastifyReply, name: string, value: string): void {
  const present = kit.isSingleValuedName(name) ? undefined : reply.getHeader(name)
  reply.header(name, present === undefined ? value : `${present}, ${value}`)
}

const fields: kit.FieldSink<FastifyReply> = {
  putEntries(reply, entries) {
    for (const [name, value] of entries) put(reply, name, value)
  },
  putVerdict(reply, verdict, write) {
    write(verdict, { write: (name, value) => put(reply, name, value) })
  },
}

/** An `onRequest` hook: `app.addHook('onRequest', rateLimit(rules))`. */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: CoreOptions & RequestHooks<FastifyRequest> = {},
) {
  const limits = kit.createAdapterKit<FastifyRequest, FastifyReply>(rules, options, fastify)

  function finish(exchange: Exchange, done: HookHandlerDoneFunction) {
    exchange.writeFields(fields, exchange.res)
    if (exchange.denial === undefined) {
      if (limits.watchesEnd) endWhenFinished(exchange.res.raw, exchange)
      // With `settle`: the body is read as the raw response sends it.
      const meter = limits.meter?.(exchange)
      if (meter !== undefined) meterNodeBody(exchange.res.raw, meter)
      return done()
    }
    // A hook that answers does not call done(). A Buffer, as Fastify would add a charset to
    // the problem body's Content-Type for a string.
    exchange.res.code(exchange.denial.status).send(Buffer.from(exchange.denial.body))
  }

  return function tollgate(
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    const exchange = limits.enter(request, reply)
    if (exchange === undefined) return done()
    if (!kit.isPromise(exchange.ready)) return finish(exchange, done)
    exchange.ready.then((decided) => finish(decided, done)).catch(done)
  }
}
