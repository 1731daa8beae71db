import { MAX_TIME_MS } from '../algorithms/integer.js'
import type { Clock } from '../clock.js'
import { RateLimitError } from '../errors.js'
import { messageOf, type Reporter } from '../limiter/report.js'
import type { Logger, StoreErrorContext } from '../limiter/types.js'
import type { WarnOnce } from '../warnings.js'

// `createReporter`, `createWarnOnce` and `clockReader` in fewer bytes: the same codes, each
// distinct limiter warning once and each identity warning once by code, `onError` for store and
// clock failures, a clock's failure decided like a store's.

/** The limiter's reporter, with the identity resolver's warnings (`createWarnOnce`'s). */
export type EdgeReporter = Reporter & {
  /** Warns once per code, never for the codes in `ignoreWarnings`. */
  readonly warnCode: WarnOnce
}

export function createEdgeReporter(
  logger: Logger | false,
  onError: ((error: unknown, context: StoreErrorContext) => void) | undefined,
  ignored: readonly string[] | undefined,
): EdgeReporter {
  const warned = new Set<string>()
  const codes = new Set(ignored)
  /** Logs a warning unless `seen` has its key; the distinct limiter lines kept are at most 100. */
  function warn(seen: Set<string>, key: string, code: string, message: string) {
    if (logger === false || seen.has(key)) return
    if (seen === warned && seen.size >= 100) seen.clear()
    seen.add(key)
    try {
      logger.warn(`[tollgate] ${code}: ${message}`)
    } catch {
      // A broken logger must not turn a rate-limit decision into an error.
    }
  }
  const warnOnce: Reporter['warnOnce'] = (code, message) =>
    warn(warned, `${code}: ${message}`, code, message)
  return {
    warnOnce,
    warnCode: (code, message) => warn(codes, code, code, message),
    storeError(error, context) {
      if (onError !== undefined) {
        try {
          onError(error, context)
        } catch (hookError) {
          warnOnce('WARN_ON_ERROR_THREW', `onError threw: ${messageOf(hookError)}`)
        }
      } else if (isClockFailure(error)) {
        warnOnce('WARN_CLOCK_FAILED', "the clock failed; each rule's onStoreError decides")
      } else {
        const open = context.failClosed ? 'denied (fail-closed)' : 'allowed (fail-open)'
        warnOnce(
          'WARN_STORE_FAILED',
          `store consume failed for ${context.rules.join(', ')}; requests ${open}: ${messageOf(error)}`,
        )
      }
    },
  }
}

/**
 * Reads the clock as whole ms: `[now]`, or, when it throws or returns no time, the latest time
 * read with `ERR_RL_CLOCK_FAILED` (decided as a store failure).
 */
export function edgeClock(clock: Clock, reporter: Reporter): () => [number, RateLimitError?] {
  let latest = 0
  return () => {
    let problem: string
    let cause: unknown
    try {
      const value: unknown = clock.now()
      if (typeof value === 'number' && value >= 0 && value <= MAX_TIME_MS) {
        const now = Math.floor(value)
        if (now < latest) reporter.warnOnce('WARN_CLOCK_STEPPED_BACK', 'the clock stepped back')
        latest = now
        return [now]
      }
      problem = `returned ${String(value)}`
    } catch (error) {
      cause = error
      problem = `threw: ${messageOf(error)}`
    }
    return [latest, new RateLimitError('ERR_RL_CLOCK_FAILED', `clock.now() ${problem}`, { cause })]
  }
}

/** Never throws, whatever a store rejects with (a revoked proxy throws on any inspection). */
function isClockFailure(error: unknown): boolean {
  try {
    return error instanceof RateLimitError && error.code === 'ERR_RL_CLOCK_FAILED'
  } catch {
    return false
  }
}
