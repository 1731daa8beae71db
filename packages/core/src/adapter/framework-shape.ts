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
  if (typeof handed !== 'object' || handed === null) return undefined
  const h = handed as Shape
  const is = (value: unknown, type: string) => typeof value === type
  // Koa's context delegates to its request and response, and its app is an object.
  if (is(h.request, 'object') && is(h.response, 'object') && is(h.throw, 'function')) {
    if (is(h.app, 'object')) return 'Koa'
  }
  if (is(h.req, 'object') && is(h.req?.raw, 'object') && is(h.header, 'function')) {
    if (is(h.json, 'function')) return 'Hono'
  }
  // Express's request points to its app (a function) and its response.
  return is(h.app, 'function') && is(h.res, 'object') && is(h.get, 'function')
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
