import type { WriteVerdictFields } from '../headers/families.js'
import type { HeaderAccessor, HeaderEntries } from '../headers/types.js'
import type { Verdict, WaitSignal } from '../limiter/types.js'
import type { NodeIncomingHeaders } from '../node/node-header-limit.js'
import type { FrameworkName } from './framework-shape.js'

// What an adapter hands the kit (how to read its framework's request, where to put fields) and
// what the kit hands back.

/**
 * How the kit reads one framework's request (Express's `req`, Koa's `ctx`, Hono's `c`): plain
 * functions, given once per middleware and called on every request, so keep them to a property
 * read or two.
 */
export type Framework<Req> = {
  /**
   * The framework whose requests these are: on its first request, the kit refuses one that
   * looks like another's (`ERR_RL_WRONG_FRAMEWORK`, naming the adapter to import).
   * @default none: not checked
   */
  readonly name?: FrameworkName | undefined
  /** The request's HTTP method, e.g. `GET`. */
  readonly method: (req: Req) => string
  /** The full path the router dispatches on (a query string is dropped by the limiter). */
  readonly path: (req: Req) => string
  /** The socket peer's address; forwarding headers are the kit's to trust (`trustProxy`). */
  readonly socketAddress: (req: Req) => string | undefined
  /**
   * One request header by its lower-case name (see `HeaderAccessor`). Asked only for the
   * headers the rules and options need: the API key's, the forwarding header behind trusted
   * proxies, and now and then the forwarding headers that no proxy is trusted with (to warn).
   */
  readonly header: (req: Req, name: string) => ReturnType<HeaderAccessor>
  /**
   * The runtime's event-loop delay signal, made on first use (Node adapters:
   * `eventLoopDelay` from `@tollgate/core/node`), for `shed.maxEventLoopDelayMs`. @default none
   */
  readonly eventLoopDelay?: (() => () => number) | undefined
  /**
   * What the framework's auth middleware leaves for the user (`req.user`), when the app gives no
   * `user` hook: an id, or an object with an `id` (see `userIdOf`); anything else is no user.
   */
  readonly user: (req: Req) => unknown
  /** Options of the adapter's own that must be functions when given (e.g. `getConnInfo`). */
  readonly hooks?: readonly string[] | undefined
  /**
   * The Node request this one was read from (Express's `req`, Koa's `ctx.req`, `c.env.incoming`
   * on @hono/node-server): when Node may have cut its header list (`headerListMayBeCut`), its
   * forwarding headers are not trusted. Asked only while a proxy is trusted, whose forwarding
   * header walk makes the check, so a middleware that trusts none holds no code of it.
   * @default none: never cut
   */
  readonly incoming?: ((req: Req) => Partial<NodeIncomingHeaders> | undefined) | undefined
  /**
   * A signal that aborts when the client goes away, asked for only when a request waits in a
   * queue (on Node, `closeSignal(res)` from `@tollgate/core/node`; on fetch runtimes the
   * request's own `signal`): the request is then dropped from the queue and its slot given back.
   * @default never told: a queued request whose client left is still served at its slot
   */
  readonly disconnected?: ((req: Req) => WaitSignal | undefined) | undefined
}

/**
 * Puts fields on a framework's response with its own API; one per middleware. `Target` is what
 * the fields go on (a Node response, a Hono context).
 */
export type FieldSink<Target> = {
  /**
   * Writes fields in order: a list field already set gets the value appended, `Content-Type` is
   * replaced, and single-valued rate-limit fields another Tollgate middleware set are merged as
   * `mergeFields` says.
   */
  putEntries(target: Target, entries: HeaderEntries): void
  /**
   * Writes an admitted request's fields as `putEntries` would, with no entries built: `write`
   * calls the writer once per field, synchronously (the fast path most requests take).
   */
  putVerdict(target: Target, verdict: Verdict, write: WriteVerdictFields): void
}
