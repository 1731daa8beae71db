import type { CoreOptions, RequestHooks } from '../adapter/middleware.js'
import type { LimiterOptions } from '../limiter/types.js'

// Every option by name, so that an unknown one can be refused. Typed as records of the option
// types' keys: adding an option to a type without listing it here does not compile.

const LIMITER: { readonly [K in keyof LimiterOptions]-?: true } = {
  rules: true,
  store: true,
  algorithms: true,
  routes: true,
  clock: true,
  timers: true,
  logger: true,
  onError: true,
  storeErrorRetryAfterMs: true,
  storeTimeoutMs: true,
  customIdentities: true,
}

const CORE: { readonly [K in keyof CoreOptions]-?: true } = {
  store: true,
  algorithms: true,
  routes: true,
  clock: true,
  timers: true,
  logger: true,
  onError: true,
  storeErrorRetryAfterMs: true,
  storeTimeoutMs: true,
  customIdentities: true,
  trustProxy: true,
  proxyHeader: true,
  proxies: true,
  ipv4Prefix: true,
  ipv6Prefix: true,
  ignoreWarnings: true,
  apiKeyHeader: true,
  bearerAsApiKey: true,
  maxApiKeyLength: true,
  legacyHeaders: true,
  legacyReset: true,
  standardHeaders: true,
  shadowPolicies: true,
  partitionKey: true,
  exposeHeaders: true,
  missingIdentity: true,
}

const HOOKS: { readonly [K in keyof RequestHooks<unknown> | 'onLimited']-?: true } = {
  skip: true,
  user: true,
  plan: true,
  identities: true,
  refund: true,
  onShadowDenied: true,
  shed: true,
  debugHeader: true,
  onLimited: true,
}

// Pure (annotated calls, no spread), so that a bundle that never checks options drops the tables.
const NO_NAMES: readonly string[] = []

/** The options of `createLimiter`. */
export const LIMITER_OPTIONS: readonly string[] = /* @__PURE__ */ Object.keys(LIMITER)

/** The options every adapter's `rateLimit()` takes: core's and the request hooks. */
export const ADAPTER_OPTIONS: readonly string[] = /* @__PURE__ */ NO_NAMES.concat(
  /* @__PURE__ */ Object.keys(CORE),
  /* @__PURE__ */ Object.keys(HOOKS),
)

/** The limiter's own options out of an adapter's, for `createLimiter`. */
export function limiterOptionsOf<T extends object>(options: T): Partial<LimiterOptions> {
  const picked: Record<string, unknown> = {}
  for (const name of LIMITER_OPTIONS) {
    if (name in options) picked[name] = (options as Record<string, unknown>)[name]
  }
  return picked
}
