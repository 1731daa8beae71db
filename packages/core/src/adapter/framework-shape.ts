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

/** A kit's entry: reads a request and hands back its exchange. */
export type Enter<Req, Res, Exchange> = (req: Req, res: Res) => Exchange

/**
 * Has `kit` refuse its requests with `ERR_RL_WRONG_FRAMEWORK` while they look like another
 * framework's than `own`'s (nothing on a wrong framework can work, and the adapter would fail
 * deep inside with a `TypeError` that says nothing of the mix-up), and put its plain `enter` back
 * at the first that does not, so that later requests pay nothing for the check.
 */
export function guardFramework<Req, Res, Exchange>(
  kit: { enter: Enter<Req, Res, Exchange> },
  own: FrameworkName | undefined,
): void {
  const enter = kit.enter
  if (own === undefined) return
  kit.enter = (req, res) => {
    const seen = frameworkOf(req)
    if (seen !== undefined && seen !== own) {
      // The adapters' packages: `@tollgate/express`, `@tollgate/koa`, `@tollgate/hono`.
      throw new RateLimitError(
        'ERR_RL_WRONG_FRAMEWORK',
        `this is @tollgate/${own.toLowerCase()}'s rateLimit, mounted on what looks like a ${seen} app: import rateLimit from @tollgate/${seen.toLowerCase()}`,
      )
    }
    kit.enter = enter
    return enter(req, res)
  }
}
