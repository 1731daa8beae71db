import type { CoreOptions, ResponseSettler, RuleConfig, Verdict } from '@tollgate/express'
import type { ManualClock } from '@tollgate/test-utils'

/** A request as a scenario writes it. */
export type SentRequest = {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
}

/** A response, reduced to what every adapter must agree on. */
export type Exchange = {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** What a target needs to build its app for one scenario. */
export type AppSetup = {
  readonly rules: readonly RuleConfig[]
  readonly options: CoreOptions
  readonly clock: ManualClock
  readonly skip: (path: string) => boolean
  readonly refund: 'failed' | 'succeeded' | undefined
  readonly onShadowDenied: (verdict: Verdict) => void | Promise<void>
  /** Every error that reaches the framework's error handling: a scenario expects none. */
  readonly onAppError: (error: unknown) => void
  /** The middleware's `settle` option. @default none */
  readonly settle?: ResponseSettler | undefined
  /** True for an `estimate` option reading the request's `x-test-estimate`. @default false */
  readonly estimate?: boolean | undefined
}

/**
 * Headers that belong to the framework or the transport, not to Tollgate: they differ between
 * frameworks (Express's `X-Powered-By`, chunked or not) or between runs (`Date`).
 */
const NOISE = new Set([
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'x-powered-by',
  'etag',
])

export function normalise(exchange: Exchange): Exchange {
  const headers: Record<string, string> = {}
  for (const name of Object.keys(exchange.headers).sort()) {
    const lower = name.toLowerCase()
    if (!NOISE.has(lower)) headers[lower] = String(exchange.headers[name])
  }
  return { status: exchange.status, headers, body: exchange.body }
}
