import { methods, type OptionKind, orNull, shown, whole } from '../options/option-values.js'
import type { LimiterOptions } from './types.js'

/** The algorithms a limiter's rules may name: the option's, or its parts' when it gives none. */
export const ALGORITHMS: OptionKind = (value) =>
  typeof value === 'object' && value !== null
    ? undefined
    : `expected an object such as { token_bucket: tokenBucket }, got ${shown(value)}`

/** A store: the option's, or the one its parts' factory made. */
export const STORE: OptionKind = methods(['consume', 'refund'], 'a Store')

/**
 * Every limiter option by name, so that an unknown one can be refused, with what its value must
 * be, or 0 for none here (the rules, `customIdentities` and `figures` are checked with the rules,
 * `algorithms` once resolved; `onError` is called as it is given).
 * Typed as a record of the option type's keys: adding an option to the type without listing it
 * here does not compile.
 */
const TIMER_MS: OptionKind = /* @__PURE__ */ whole({ min: 1, max: 2 ** 31 - 1, unit: 'ms' })

export const LIMITER_KINDS: { readonly [K in keyof LimiterOptions]-?: OptionKind | 0 } = {
  rules: 0,
  // Null reads as no store: the default one.
  store: orNull(STORE),
  // Checked once resolved (`ALGORITHMS`): none or null reads the parts' algorithms.
  algorithms: 0,
  clock: methods(['now'], '{ now(): number }'),
  timers: methods(['setTimeout', 'clearTimeout'], '{ setTimeout, clearTimeout }'),
  logger: (value) => (value === false ? undefined : methods(['warn'], '{ warn(message) }')(value)),
  onError: 0,
  storeErrorRetryAfterMs: whole({ min: 1, unit: 'ms' }),
  // Timers take at most 2^31 − 1 ms; beyond that they fire at once. False: no deadline.
  storeTimeoutMs: (value) => (value === false ? undefined : TIMER_MS(value)),
  customIdentities: 0,
  lists: methods(['compile'], 'accessLists()'),
  figures: 0,
}

/** The options of `createLimiter`. Pure, so that a bundle that never checks them drops it. */
export const LIMITER_OPTIONS: readonly string[] = /* @__PURE__ */ Object.keys(LIMITER_KINDS)
