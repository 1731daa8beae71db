import { RateLimitError } from '../errors.js'
import { onceWarner } from '../warnings.js'
import type { Logger, StoreErrorContext } from './types.js'

/** Stable codes of the limiter's warnings (logged as `[tollgate] CODE: message`). */
type LimiterWarningCode =
  /** The store threw or rejected and no `onError` hook is set. */
  | 'WARN_STORE_FAILED'
  /** A request without an `ip` identity was counted in the bucket shared by all such requests. */
  | 'WARN_SHARED_CLIENT_BUCKET'
  /** The `onError` hook itself threw; the request was decided anyway. */
  | 'WARN_ON_ERROR_THREW'
  /** The clock threw or returned no time, and no `onError` hook is set; decided as a store failure. */
  | 'WARN_CLOCK_FAILED'
  /** The clock read earlier than before (an NTP step back). */
  | 'WARN_CLOCK_STEPPED_BACK'
  /** `limiter.update` refused a rule set; the running rules stay. */
  | 'WARN_RULES_UPDATE_REFUSED'
  /** A client's figures lookup failed or gave figures its rule refuses; its last ones were used. */
  | 'WARN_FIGURES_REFUSED'

export type Reporter = {
  /** Warns through the logger, once per distinct message. */
  warnOnce(code: LimiterWarningCode, message: string): void
  /**
   * Hands a store error to `onError` with its context (or warns); never throws, whatever
   * `onError` does. The context's builder for the failures every limiter reports: see
   * `StoreErrorContext` for each field.
   */
  storeError(
    error: unknown,
    operation: StoreErrorContext['operation'],
    rules: readonly string[],
    failClosed?: boolean,
  ): void
  /**
   * `storeError` with the context built (local fallback adds its rules): `onError` hears it, or
   * a warning names `named` and says what became of the requests (`outcome`).
   */
  report(
    error: unknown,
    context: StoreErrorContext,
    named: readonly string[],
    outcome: string,
  ): void
}

export function createReporter(
  logger: Logger | false,
  onError: ((error: unknown, context: StoreErrorContext) => void) | undefined,
): Reporter {
  const warnOnce = onceWarner<LimiterWarningCode>(logger, true)
  const report: Reporter['report'] = (error, context, named, outcome) => {
    if (onError !== undefined) {
      try {
        onError(error, context)
      } catch (hookError) {
        warnOnce('WARN_ON_ERROR_THREW', `onError threw: ${messageOf(hookError)}`)
      }
    } else {
      warnOnce(
        'WARN_STORE_FAILED',
        `store ${context.operation} failed for ${named.join(', ')}; ${outcome}: ${messageOf(error)}`,
      )
    }
  }
  return {
    warnOnce,
    report,
    storeError: (error, operation, rules, failClosed = false) =>
      report(
        error,
        { operation, rules, failClosed },
        rules,
        operation === 'refund'
          ? 'the charges may stay taken'
          : failClosed
            ? 'requests denied (fail-closed)'
            : 'requests allowed (fail-open)',
      ),
  }
}

/**
 * The warning of a clock that failed (`ERR_RL_CLOCK_FAILED`) while no `onError` hook is set, in
 * place of a store failure's: the same whatever call it failed.
 */
export const CLOCK_FAILED =
  "clock.now() gave no time; each rule's onStoreError decides until it does"

/** Never throws, whatever a store rejects with (a revoked proxy throws on any inspection). */
export function isClockFailure(error: unknown): boolean {
  try {
    return error instanceof RateLimitError && error.code === 'ERR_RL_CLOCK_FAILED'
  } catch {
    return false
  }
}

/**
 * An error as text for a warning. Never throws, whatever a store rejects with: `String` throws
 * on a null-prototype object, and a message can be a getter that throws or not be text at all.
 */
export function messageOf(error: unknown): string {
  try {
    const message = error instanceof Error ? error.message : error
    return typeof message === 'string' ? message : String(message)
  } catch {
    return `(an unprintable ${typeof error})`
  }
}
