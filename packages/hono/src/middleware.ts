import { type AdapterKit, isPromise, type Pass } from '@tollgate/core/adapter'
import type { Context, MiddlewareHandler, Next } from 'hono'
import { answerDenial, type OnLimited, ResponseFields, waitUntil } from './response.js'

/**
 * The middleware around a kit, shared by `rateLimit` of both entries (the default one and
 * `@tollgate/hono/lean`), which differ only in how the kit builds its limiter.
 */
export function honoMiddleware(
  kit: AdapterKit<Context, unknown>,
  onLimited: OnLimited | undefined,
): MiddlewareHandler {
  const fields = new ResponseFields()

  function finish(
    c: Context,
    next: Next,
    pass: Pass<Context, unknown>,
  ): Promise<Response | undefined> {
    if (pass.denial !== undefined) return answerDenial(c, pass, onLimited)
    return next().then(() => {
      // Added to the finished response, so that handlers returning a `Response` of their own
      // (which drops headers set earlier with `c.header`) carry them as well.
      pass.writeFields(fields, c)
      waitUntil(c, pass.end(c.res.status))
      return undefined
    })
  }

  // Not an async function: with the memory store, an admitted request chains one promise on
  // `next()`, where an async function would add its own promise and the state of its awaits.
  // Whatever throws still reaches Hono as a rejection, as from an async function.
  return function tollgate(c, next) {
    try {
      const pass = kit.enter(c, undefined)
      if (pass === undefined) return next()
      const ready = pass.ready
      return isPromise(ready)
        ? ready.then((decided) => finish(c, next, decided))
        : finish(c, next, ready)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}
