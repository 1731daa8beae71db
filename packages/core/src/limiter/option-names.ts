import type { LimiterOptions } from './types.js'

// Every limiter option by name, so that an unknown one can be refused. Typed as a record of the
// option type's keys: adding an option to the type without listing it here does not compile.
const LIMITER: { readonly [K in keyof LimiterOptions]-?: true } = {
  rules: true,
  store: true,
  algorithms: true,
  clock: true,
  timers: true,
  logger: true,
  onError: true,
  storeErrorRetryAfterMs: true,
  storeTimeoutMs: true,
  customIdentities: true,
  lists: true,
  figures: true,
}

/** The options of `createLimiter`. Pure, so that a bundle that never checks them drops it. */
export const LIMITER_OPTIONS: readonly string[] = /* @__PURE__ */ Object.keys(LIMITER)
