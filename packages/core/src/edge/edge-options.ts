import { RateLimitError } from '../errors.js'
import { identityNameProblem } from '../rules/validate-match.js'

/** The options the edge entry takes (besides the framework's hooks). */
const TAKEN = [
  'algorithms',
  'store',
  'clock',
  'logger',
  'onError',
  'storeErrorRetryAfterMs',
  'storeTimeoutMs',
  'customIdentities',
  'trustProxy',
  'ipv4Prefix',
  'ipv6Prefix',
  'ignoreWarnings',
  'apiKeyHeader',
  'bearerAsApiKey',
  'maxApiKeyLength',
  'legacyHeaders',
  'legacyReset',
  'standardHeaders',
  'missingIdentity',
]
/** `@tollgate/hono`'s options the edge entry leaves to it, refused by name. */
const ELSEWHERE = [
  'routes',
  'timers',
  'proxies',
  'proxyHeader',
  'shadowPolicies',
  'partitionKey',
  'exposeHeaders',
  'refund',
  'onShadowDenied',
  'shed',
  'debugHeader',
]

export function invalidOption(field: string, message: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `${field}: ${message}`, { field })
}

/**
 * Refuses at start-up every option the edge entry does not take, naming it: those of
 * `@tollgate/hono` it leaves out, and unknown ones (with the closest known name); `hooks` must
 * be functions when given. `undefined` counts as not given.
 */
export function checkEdgeOptions(options: Record<string, unknown>, hooks: readonly string[]) {
  const known = [...TAKEN, ...hooks]
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue
    if (ELSEWHERE.includes(name)) {
      throw invalidOption(name, 'not taken by the edge entry (@tollgate/hono takes it)')
    }
    if (!known.includes(name)) {
      throw invalidOption(name, `unknown option (the edge entry takes ${known.join(', ')})`)
    }
    if (hooks.includes(name) && typeof value !== 'function') {
      throw invalidOption(name, `expected a function, got ${typeof value}`)
    }
  }
  const { algorithms, store, clock, logger, storeTimeoutMs } = options as {
    storeTimeoutMs?: unknown
    algorithms?: unknown
    store?: { consume?: unknown; refund?: unknown }
    clock?: { now?: unknown }
    logger?: { warn?: unknown } | false
  }
  if (typeof algorithms !== 'object' || algorithms === null) {
    throw invalidOption(
      'algorithms',
      'expected the algorithms rules may name, e.g. { token_bucket: tokenBucket }',
    )
  }
  if (
    store !== undefined &&
    (typeof store?.consume !== 'function' || typeof store.refund !== 'function')
  ) {
    throw invalidOption('store', 'expected a Store (with consume and refund)')
  }
  if (clock !== undefined && typeof clock?.now !== 'function') {
    throw invalidOption('clock', 'expected { now(): number }')
  }
  if (logger !== undefined && logger !== false && typeof logger?.warn !== 'function') {
    throw invalidOption('logger', 'expected { warn(message: string): void }')
  }
  wholeMs(options, 'storeErrorRetryAfterMs', Number.MAX_SAFE_INTEGER)
  if (storeTimeoutMs !== false) wholeMs(options, 'storeTimeoutMs', 2 ** 31 - 1)
}

function wholeMs(options: Record<string, unknown>, name: string, most: number): void {
  const value = options[name] as number | undefined
  if (value === undefined || (Number.isSafeInteger(value) && value >= 1 && value <= most)) return
  throw invalidOption(name, `expected whole ms from 1 to ${most}, got ${String(value)}`)
}

/** The identities the app provides besides the built-in ones, checked. */
export function customIdentitiesOf(value: unknown): readonly string[] {
  if (value === undefined) return []
  const names = Array.isArray(value) ? value : [undefined]
  for (const name of names) {
    const problem =
      typeof name !== 'string'
        ? "expected a list of identity names, e.g. ['account']"
        : (identityNameProblem(name) ??
          (['ip', 'api_key', 'user'].includes(name) ? `"${name}" is built in` : undefined))
    if (problem !== undefined) throw invalidOption('customIdentities', problem)
  }
  return names
}
