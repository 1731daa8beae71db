import type { Limiter, Logger, Verdict } from '../limiter/types.js'
import { explain } from './explain.js'

/** The response field the debug explanation goes in. */
export const DEBUG_HEADER = 'Tollgate-Debug'

/**
 * Options of `debugHeader`: the environment, which must be `development` for the header to be sent,
 * and where its start-up warning goes.
 */
export type DebugHeaderOptions = {
  /**
   * The environment the app runs in, as it knows it: pass `process.env.NODE_ENV` (or your
   * platform's equivalent). Only the exact text `development` turns the header on; anything
   * else, including nothing, leaves it off.
   */
  readonly environment: string | undefined
  /** Where the start-up warning that the header is on goes. @default globalThis.console */
  readonly logger?: Logger | false | undefined
}

/**
 * The `debugHeader` option of an adapter: in development only, each response carries a
 * `Tollgate-Debug` field explaining its verdict, one entry per rule:
 * `per-ip;admitted;remaining=19/20;key="ip:#5b1c0e9a";why="…"`. Keys are always hashed.
 *
 * Off unless both are true: the app wires it in code, and `environment` is exactly
 * `development`. An unset NODE_ENV (how many production deployments run), `production`,
 * `test` or `staging` give `undefined`, which an adapter takes as "no debug header". When on,
 * it warns once (`WARN_DEBUG_HEADER_ON`), so a server that sends it says so in its log.
 * @example
 * app.use(rateLimit(limiter, { debugHeader: debugHeader(limiter, { environment: process.env.NODE_ENV }) }))
 */
export function debugHeader(
  limiter: Pick<Limiter, 'rules'>,
  options: DebugHeaderOptions,
): ((verdict: Verdict) => string) | undefined {
  if (options?.environment !== 'development') return undefined
  const logger = options.logger ?? (globalThis as { console?: Logger }).console
  if (logger) {
    logger.warn(
      `[tollgate] WARN_DEBUG_HEADER_ON: every response explains its verdict in ${DEBUG_HEADER} (the environment is development)`,
    )
  }
  const rules = limiter.rules
  return (verdict) => {
    const entries = explain(verdict, rules).rules.map((rule) => {
      const parts = [rule.rule, rule.outcome, `remaining=${rule.remaining}/${rule.limit}`]
      if (rule.retryAfterMs !== undefined) parts.push(`retry-ms=${rule.retryAfterMs}`)
      if (rule.key !== undefined) parts.push(`key=${quoted(rule.key)}`)
      parts.push(`why=${quoted(rule.arithmetic)}`)
      return parts.join(';')
    })
    if (entries.length === 0) return verdict.storeFailed === true ? 'store-failed' : 'no-rule'
    return entries.join(', ')
  }
}

/** A structured-field string: printable ASCII, quotes and backslashes escaped. */
function quoted(text: string): string {
  return `"${text.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, (c) => `\\${c}`)}"`
}
