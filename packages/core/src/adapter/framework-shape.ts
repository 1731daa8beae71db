import { RateLimitError } from '../errors.js'

/** The frameworks Tollgate has an adapter for, by what their middleware is handed. */
export type FrameworkName = 'Express' | 'Koa' | 'Hono'

/** The properties the frameworks' middleware arguments are told apart by. */
type Shape = {
  readonly app?: unknown
  readonly request?: unknown
  readonly response?: unknown
  readonly throw?: unknown
  readonly req?: { readonly raw?: unknown } | null
  readonly res?: unknown
  readonly header?: unknown
  readonly json?: unknown
  readonly get?: unknown
}

/**
 * The framework whose middleware argument `handed` looks like (an Express `req`, a Koa `ctx`, a
 * Hono `c`), or undefined when it looks like none of them (a hand-made request, another
 * framework). Reads a few properties, none of them getters that build anything (Hono's `c.res`
 * would make a response): run once per middleware, on its first request.
 */
function frameworkOf(handed: unknown): FrameworkName | undefined {
  const h = (handed ?? {}) as Shape
  const is = (value: unknown, type = 'object') => typeof value === type
  // Koa's context delegates to its request and response, and its app is an object; Hono's
  // context holds its request, whose `raw` is the fetch Request; Express's request points to its
  // app (a function) and its response.
  return is(h.request) && is(h.response) && is(h.throw, 'function') && is(h.app)
    ? 'Koa'
    : is(h.req) && is(h.req?.raw) && is(h.header, 'function') && is(h.json, 'function')
      ? 'Hono'
      : is(h.app, 'function') && is(h.res) && is(h.get, 'function')
        ? 'Express'
        : undefined
}

/**
 * Throws `ERR_RL_WRONG_FRAMEWORK` when `handed` looks like another framework's than `own`'s: the
 * adapter would otherwise fail deep inside with a `TypeError` (Express's `res.setHeader` on
 * Koa's `next`) that says nothing of the mix-up.
 */
export function checkFramework(own: FrameworkName, handed: unknown): void {
  const seen = frameworkOf(handed)
  if (seen === undefined || seen === own) return
  // The adapters' packages: `@tollgate/express`, `@tollgate/koa`, `@tollgate/hono`.
  throw new RateLimitError(
    'ERR_RL_WRONG_FRAMEWORK',
    `this is @tollgate/${own.toLowerCase()}'s rateLimit, mounted on what looks like a ${seen} app: import rateLimit from @tollgate/${seen.toLowerCase()}`,
  )
}
