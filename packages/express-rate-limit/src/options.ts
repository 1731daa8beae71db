import { type Clock, systemClock, type Store as TollgateStore } from '@tollgate/core'
import type { Request, Response } from 'express'
import { EngineStore } from './engine-store.js'
import { MemoryStore } from './memory-store.js'
import type {
  ClientRateLimitInfo,
  DraftHeadersVersion,
  LegacyStore,
  Logger,
  Options,
  RateLimitExceededEventHandler,
  Store,
  ValueDeterminingMiddleware,
} from './types.js'
import { createValidations, type Validations } from './validations.js'

/** The options after parsing: defaults filled in, the store ready to count. */
export type Config = {
  readonly windowMs: number
  readonly limit: number | ValueDeterminingMiddleware<number>
  readonly message: unknown
  readonly statusCode: number
  readonly legacyHeaders: boolean
  /** A draft, `false`, or whatever else was given (warned about on the first request). */
  readonly standardHeaders: DraftHeadersVersion | false | unknown
  /** Undefined for the default name, `${limit}-in-${window}`. */
  readonly identifier: string | ValueDeterminingMiddleware<string> | undefined
  readonly retryAfter: number | ValueDeterminingMiddleware<number> | undefined
  readonly requestPropertyName: string
  readonly skipFailedRequests: boolean
  readonly skipSuccessfulRequests: boolean
  readonly requestWasSuccessful: ValueDeterminingMiddleware<boolean>
  /** Undefined for the default key: the IP, IPv6 masked to `ipv6Subnet`. */
  readonly keyGenerator: ValueDeterminingMiddleware<string> | undefined
  readonly ipv6Subnet: number | ValueDeterminingMiddleware<number> | false
  /** Undefined for the default 429. */
  readonly handler: RateLimitExceededEventHandler | undefined
  /** Undefined when nothing is skipped. */
  readonly skip: ValueDeterminingMiddleware<boolean> | undefined
  readonly store: Store
  readonly passOnStoreError: boolean
  readonly logger: Logger
  readonly clock: Clock
  readonly validations: Validations
  /** The options as handed to `store.init` and the handler, with every default. */
  readonly optionsUsed: Options
}

const DEFAULT_MESSAGE = 'Too many requests, please try again later.'

/** express-rate-limit's default logger: the console, message first. */
const consoleLogger: Logger = {
  warn: (error, message) =>
    message === undefined ? console.warn(error) : console.warn(message, error),
  error: (error, message) =>
    message === undefined ? console.error(error) : console.error(message, error),
}

/**
 * Parses the options once, as express-rate-limit does: `undefined` counts as not given, the
 * coded checks run (and warn), a logger or store of the wrong shape throws a `TypeError`.
 */
export function parseOptions(passed: Partial<Options>): Config {
  const given = Object.fromEntries(
    Object.entries(passed).filter(([, value]) => value !== undefined),
  ) as Partial<Options> & Record<string, unknown>
  const logger = passed.logger ?? consoleLogger
  if (
    typeof logger !== 'object' ||
    typeof logger.error !== 'function' ||
    typeof logger.warn !== 'function'
  ) {
    throw new TypeError('logger: expected an object with warn and error methods')
  }
  const validations = createValidations(given.validate ?? true, logger)
  validations.validationsConfig()
  validations.knownOptions(passed)
  validations.draftPolliHeaders(given['draft_polli_ratelimit_headers'])
  validations.onLimitReached(given['onLimitReached'])
  if (given.ipv6Subnet !== undefined && typeof given.ipv6Subnet !== 'function') {
    validations.ipv6Subnet(given.ipv6Subnet)
  }
  validations.keyGeneratorIpFallback(given.keyGenerator)
  validations.ipv6SubnetOrKeyGenerator(given)
  const clock = given.clock ?? systemClock
  const store = storeOf(given.store, validations, clock)
  const standardHeaders =
    given.standardHeaders === true ? 'draft-6' : (given.standardHeaders ?? false)
  // Defaults, then every option given (deprecated and unknown ones too, as the store's `init`
  // sees them), then what parsing resolved.
  const optionsUsed = {
    windowMs: 60_000,
    limit: given.max ?? 5,
    message: DEFAULT_MESSAGE,
    statusCode: 429,
    legacyHeaders: given.headers ?? true,
    requestPropertyName: 'rateLimit',
    skipFailedRequests: false,
    skipSuccessfulRequests: false,
    requestWasSuccessful: wasSuccessful,
    skip: never,
    ipv6Subnet: 56,
    passOnStoreError: false,
    ...given,
    standardHeaders,
    store,
    logger,
    validate: validations.enabled,
  } as Options
  return {
    windowMs: optionsUsed.windowMs,
    limit: optionsUsed.limit,
    message: optionsUsed.message,
    statusCode: optionsUsed.statusCode,
    legacyHeaders: optionsUsed.legacyHeaders,
    standardHeaders,
    identifier: given.identifier,
    retryAfter: given.retryAfter,
    requestPropertyName: optionsUsed.requestPropertyName,
    skipFailedRequests: optionsUsed.skipFailedRequests,
    skipSuccessfulRequests: optionsUsed.skipSuccessfulRequests,
    requestWasSuccessful: optionsUsed.requestWasSuccessful,
    keyGenerator: given.keyGenerator,
    ipv6Subnet: optionsUsed.ipv6Subnet,
    handler: given.handler,
    skip: given.skip,
    store,
    passOnStoreError: optionsUsed.passOnStoreError,
    logger,
    clock,
    validations,
    optionsUsed,
  }
}

function wasSuccessful(_request: Request, response: Response): boolean {
  return response.statusCode < 400
}

function never(): boolean {
  return false
}

/**
 * The store to count in: a `MemoryStore` by default; a Tollgate store (with `consume` and
 * `refund`) counted by Tollgate's fixed window; a callback store of express-rate-limit 5 and
 * older behind promises; any other store as it is, once its shape is checked.
 */
function storeOf(
  given: Options['store'] | undefined,
  validations: Validations,
  clock: Clock,
): Store {
  if (given === undefined) return new MemoryStore(validations, clock)
  const store = given as Partial<Store & LegacyStore & TollgateStore>
  if (typeof store.consume === 'function' && typeof store.increment !== 'function') {
    return new EngineStore(given as TollgateStore, 'epoch', clock)
  }
  const counted =
    typeof store.incr === 'function' && typeof store.increment !== 'function'
      ? promisified(given as LegacyStore)
      : (given as Store)
  const optional = (method: unknown) => method === undefined || typeof method === 'function'
  if (
    typeof counted.increment !== 'function' ||
    typeof counted.decrement !== 'function' ||
    typeof counted.resetKey !== 'function' ||
    !optional(counted.resetAll) ||
    !optional(counted.init)
  ) {
    throw new TypeError(
      'store: expected an object with increment, decrement and resetKey methods (the Store interface), or a Tollgate store',
    )
  }
  return counted
}

/** A callback store (`incr`) behind the promise interface. */
function promisified(legacy: LegacyStore): Store {
  return {
    increment: (key) =>
      new Promise<ClientRateLimitInfo>((resolve, reject) => {
        legacy.incr(key, (error, totalHits, resetTime) => {
          if (error) reject(error)
          resolve({ totalHits, resetTime })
        })
      }),
    decrement: async (key) => legacy.decrement(key),
    resetKey: async (key) => legacy.resetKey(key),
    resetAll: async () => legacy.resetAll?.(),
  }
}

/** The default name of the quota in draft-8 fields: `5-in-1min`, `100-in-2hrs`… */
export function windowName(windowMs: number): string {
  const seconds = windowMs / 1000
  if (seconds < 60) return `${seconds}sec`
  const minutes = seconds / 60
  if (minutes < 60) return `${minutes}min`
  const hours = minutes / 60
  if (hours < 24) return `${hours}hr${hours > 1 ? 's' : ''}`
  const days = hours / 24
  return `${days}day${days > 1 ? 's' : ''}`
}
