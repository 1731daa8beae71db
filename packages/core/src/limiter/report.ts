import type { Logger, StoreErrorContext } from './types.js'

/** How many distinct warnings are remembered; past it the memory starts over. */
const REMEMBERED = 100

export type Reporter = {
  /** Warns through the logger, once per distinct message. */
  warnOnce(message: string): void
  /** Hands a store error to `onError` (or warns); never throws, whatever `onError` does. */
  storeError(error: unknown, context: StoreErrorContext): void
}

export function createReporter(
  logger: Logger,
  onError: ((error: unknown, context: StoreErrorContext) => void) | undefined,
): Reporter {
  const warned = new Set<string>()
  function warnOnce(message: string): void {
    if (warned.has(message)) return
    if (warned.size >= REMEMBERED) warned.clear()
    warned.add(message)
    try {
      logger.warn(`[tollgate] ${message}`)
    } catch {
      // A broken logger must not turn a rate-limit decision into an error.
    }
  }
  return {
    warnOnce,
    storeError(error, context) {
      if (onError === undefined) {
        const reason = error instanceof Error ? error.message : String(error)
        const policy = context.failClosed ? 'denied (fail-closed)' : 'allowed (fail-open)'
        warnOnce(
          `store ${context.operation} failed for ${context.rules.join(', ')}; requests ${context.operation === 'refund' ? 'keep their charge' : policy}: ${reason}`,
        )
        return
      }
      try {
        onError(error, context)
      } catch (hookError) {
        warnOnce(
          `onError threw: ${hookError instanceof Error ? hookError.message : String(hookError)}`,
        )
      }
    },
  }
}
