/**
 * `@tollgate/hono/edge`: `rateLimit` for Cloudflare Workers and other edge runtimes, in the
 * smallest bundle. It takes rate and window rules (token bucket, GCRA, leaky bucket, fixed
 * window, sliding log, sliding window) keyed on identities and matched by method and plan, with
 * the default field forms, and answers them exactly as `@tollgate/hono` does: the same statuses,
 * fields, bodies and retry times. What it leaves to `@tollgate/hono` (queue and concurrency
 * rules, routes, forwarding headers, other field forms, refunds…) is refused at start-up,
 * naming the rule or option and the field.
 * @example
 * import { rateLimit, tokenBucket } from '@tollgate/hono/edge'
 * app.use(rateLimit(rules, { algorithms: { token_bucket: tokenBucket } }))
 */
import type { RuleConfig } from '@tollgate/core'
import { isPromise, userIdOf } from '@tollgate/core/adapter'
import { createEdgeKit, type EdgeAnswer, type EdgeOptions } from '@tollgate/core/edge'
import type { Context, MiddlewareHandler, Next } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { putFields, setDenialFields, withDenialFields } from './edge-fields.js'
import { defaultAddress } from './request.js'
import type { OnLimited } from './response.js'

export {
  type AlgorithmTable,
  fixedWindow,
  gcra,
  leakyBucket,
  mapStore,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
export type { OnLimited } from './response.js'

/** The edge entry's options: `@tollgate/hono`'s that it takes, with `algorithms` required. */
export type EdgeHonoRateLimitOptions = EdgeOptions<Context> & {
  /**
   * The client's connection, e.g. `getConnInfo` from `hono/cloudflare-workers`.
   * @default Cloudflare Workers, Node, Bun and Deno are recognised without it
   */
  readonly getConnInfo?: GetConnInfo | undefined
  /** Replaces the default denial; the rate-limit headers are already set with `c.header`. */
  readonly onLimited?: OnLimited | undefined
}

/**
 * Rate-limits a Hono app as `@tollgate/hono`'s `rateLimit` does, for the rules and options this
 * entry takes (see the module's description); rules may name only the algorithms in
 * `options.algorithms`.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }],
 *   { algorithms: { token_bucket: tokenBucket } }))
 */
export function rateLimit(
  rules: readonly RuleConfig[],
  options: EdgeHonoRateLimitOptions,
): MiddlewareHandler {
  const { getConnInfo, onLimited } = options
  const kit = createEdgeKit(rules, options, {
    method: (c) => c.req.method,
    socketAddress:
      getConnInfo === undefined ? defaultAddress : (c) => getConnInfo(c).remote.address,
    header: (c, name) => c.req.header(name),
    user: (c) => userIdOf(c.get('user' as never)),
    hooks: ['getConnInfo'],
  })
  function finish(c: Context, next: Next, answer: EdgeAnswer): Promise<Response | undefined> {
    const { denial, denialFields } = answer
    if (denial !== undefined) {
      setDenialFields(c, denialFields!)
      if (onLimited === undefined)
        return Promise.resolve(c.body(denial.body, denial.status as ContentfulStatusCode))
      return Promise.resolve(onLimited(c, denial, answer.verdict)).then((own) =>
        withDenialFields(own, denialFields!),
      )
    }
    return next().then(() => {
      // Added to the finished response, so that handlers returning a `Response` of their own
      // (which drops headers set earlier with `c.header`) carry them as well.
      putFields(c, answer.fields)
      return undefined
    })
  }

  return function tollgate(c, next) {
    try {
      const answer = kit(c)
      if (answer === undefined) return next()
      return isPromise(answer)
        ? answer.then((decided) => finish(c, next, decided))
        : finish(c, next, answer)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}
