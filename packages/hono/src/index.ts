import type { CoreOptions, Limiter, RequestHooks, RuleConfig } from '@tollgate/core'
import { createAdapterKit } from '@tollgate/core/adapter'
import type { Context, MiddlewareHandler } from 'hono'
import type { GetConnInfo } from 'hono/conninfo'
import { honoMiddleware } from './middleware.js'
import { hono } from './request.js'
import type { OnLimited } from './response.js'

export * from '@tollgate/core'

export type HonoRateLimitOptions = CoreOptions &
  RequestHooks<Context> & {
    /**
     * The client's connection, e.g. `getConnInfo` from `hono/bun` or `@hono/node-server/conninfo`.
     * @default Node, Bun, Deno and Cloudflare Workers are recognised without it
     */
    readonly getConnInfo?: GetConnInfo | undefined
    /** Replaces the default denial; the rate-limit headers are already set with `c.header`. */
    readonly onLimited?: OnLimited | undefined
  }

/**
 * Rate-limits a Hono app, on Node, Bun, Deno or Cloudflare Workers.
 * @param rules rules in code (`defineRules` shape), from a rule file (`loadRulesText`), or a
 * limiter of your own (`createLimiter`), e.g. to share its state with other code.
 * @example
 * app.use(rateLimit([{ id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 }]))
 */
export function rateLimit(
  rules: readonly RuleConfig[] | Limiter,
  options: HonoRateLimitOptions = {},
): MiddlewareHandler {
  const kit = createAdapterKit(rules, options, hono(options.getConnInfo))
  return honoMiddleware(kit, options.onLimited)
}
