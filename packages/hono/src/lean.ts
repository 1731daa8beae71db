/**
 * `@tollgate/hono/lean`: `rateLimit` for Workers and other edge runtimes, where every byte of
 * the bundle is paid at each cold start. The same middleware, decisions and fields as
 * `@tollgate/hono`, except that rules may name only the algorithms passed in `algorithms`, so the
 * bundle holds those and no other, and that the default store is the small `mapStore()`.
 * @example
 * import { rateLimit, tokenBucket } from '@tollgate/hono/lean'
 * app.use(rateLimit(rules, { algorithms: { token_bucket: tokenBucket } }))
 */
import type { AlgorithmTable, Limiter, RuleConfig } from '@tollgate/core'
import { createLeanAdapterKit } from '@tollgate/core/adapter'
import type { MiddlewareHandler } from 'hono'
import type { HonoRateLimitOptions } from './index.js'
import { honoMiddleware } from './middleware.js'
import { hono } from './request.js'

export {
  type AlgorithmTable,
  fixedWindow,
  gcra,
  leakyBucket,
  mapStore,
  memoryStore,
  routeMatching,
  slidingLog,
  slidingWindow,
  tokenBucket,
  trustedProxies,
} from '@tollgate/core'
export type { HonoRateLimitOptions } from './index.js'

/** `@tollgate/hono`'s options, with the algorithms the rules may name (required). */
export type LeanHonoRateLimitOptions = HonoRateLimitOptions & {
  readonly algorithms: AlgorithmTable
}

/**
 * Rate-limits a Hono app as `@tollgate/hono`'s `rateLimit` does; rules may name only the
 * algorithms in `options.algorithms`. A limiter of your own is taken as it is.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }],
 *   { algorithms: { token_bucket: tokenBucket } }))
 */
export function rateLimit(
  rules: readonly RuleConfig[],
  options: LeanHonoRateLimitOptions,
): MiddlewareHandler
export function rateLimit(limiter: Limiter, options?: HonoRateLimitOptions): MiddlewareHandler
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: HonoRateLimitOptions = {},
): MiddlewareHandler {
  const kit = createLeanAdapterKit(rules, options, hono(options.getConnInfo))
  return honoMiddleware(kit, options.onLimited)
}
