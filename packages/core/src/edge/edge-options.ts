import { RateLimitError } from '../errors.js'
import { identityNameProblem } from '../rules/validate-match.js'
import { ELSEWHERE_PROBLEM, wholeProblem } from './edge-rules.js'

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

/** Options that must be whole numbers from a least to a most (the largest safe one unless given). */
const WHOLE: ReadonlyArray<readonly [string, number, number?]> = [
  ['storeErrorRetryAfterMs', 1],
  ['storeTimeoutMs', 1, 2 ** 31 - 1],
  ['ipv4Prefix', 0, 32],
  ['ipv6Prefix', 0, 128],
  ['maxApiKeyLength', 1],
]

/** Options that must be objects with these methods. */
const SHAPES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['store', ['consume', 'refund']],
  ['clock', ['now']],
  ['logger', ['warn']],
]

export function invalidOption(field: string, message: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `${field}: ${message}`, { field })
}

/**
 * Refuses at start-up every option the edge entry does not take, naming it (an unknown one, or
 * one of `@tollgate/hono`'s it leaves out); `hooks` must be functions when given, the options
 * their shapes. `undefined` counts as not given.
 */
export function checkEdgeOptions(options: Record<string, unknown>, hooks: readonly string[]) {
  const known = [...TAKEN, ...hooks]
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue
    if (!known.includes(name)) throw invalidOption(name, ELSEWHERE_PROBLEM)
    if (hooks.includes(name) && typeof value !== 'function') {
      throw invalidOption(name, `expected a function, got ${typeof value}`)
    }
  }
  const { algorithms } = options
  if (typeof algorithms !== 'object' || algorithms === null) {
    throw invalidOption(
      'algorithms',
      'expected the algorithms rules name, e.g. { token_bucket: tokenBucket }',
    )
  }
  for (const [name, methods] of SHAPES) {
    const value = options[name] as Record<string, unknown> | false | undefined
    if (value === undefined || (value === false && name === 'logger')) continue
    if (
      !methods.every((method) => typeof (value as Record<string, unknown>)?.[method] === 'function')
    ) {
      throw invalidOption(name, `expected an object with ${methods.join('() and ')}()`)
    }
  }
  for (const [name, min, most] of WHOLE) {
    const value = options[name]
    const problem =
      value === undefined || (value === false && name === 'storeTimeoutMs')
        ? undefined
        : wholeProblem(value, min, most)
    if (problem !== undefined) throw invalidOption(name, problem)
  }
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
