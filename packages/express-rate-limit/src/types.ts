/**
 * The public types, under the names express-rate-limit 8 gives them, so that code typed against
 * it compiles unchanged after the import is switched.
 */
import type { Clock, Store as TollgateStore } from '@tollgate/core'
import type { NextFunction, Request, RequestHandler, Response } from 'express'

/** A value, or a function of the request that returns it (synchronously or not). */
export type ValueDeterminingMiddleware<T> = (request: Request, response: Response) => T | Promise<T>

/** Answers a request over its limit; the headers are already set. */
export type RateLimitExceededEventHandler = (
  request: Request,
  response: Response,
  next: NextFunction,
  optionsUsed: Options,
) => void

/** Receives validation messages and store errors. */
export type Logger = {
  /**
   * Receives a `WRN_ERL_*` warning: a setting whose meaning changed in express-rate-limit 7, or
   * that was removed.
   */
  warn(error: unknown, message?: string): void
  /** Receives a validation error (an `ERR_ERL_*` setting that is wrong) or a store error. */
  error(error: unknown, message?: string): void
}

/** The standard header drafts. */
export type DraftHeadersVersion = 'draft-6' | 'draft-7' | 'draft-8'

/** A key's count and when its window ends, as a store reports them. */
export type ClientRateLimitInfo = {
  totalHits: number
  resetTime: Date | undefined
}

/**
 * What a store's `increment` answers: the key's hits and the reset time (express-rate-limit's
 * name).
 */
export type IncrementResponse = ClientRateLimitInfo

/** The callback of a store written for express-rate-limit 5 and older. */
export type IncrementCallback = (
  error: Error | undefined,
  totalHits: number,
  resetTime: Date | undefined,
) => void

/** A store written for express-rate-limit 5 and older (callbacks). */
export type LegacyStore = {
  /** Counts a hit and calls back with the count and reset time. */
  incr(key: string, callback: IncrementCallback): void
  /** Gives one hit back. */
  decrement(key: string): void
  /** Forgets the key. */
  resetKey(key: string): void
  /** Forgets every key. */
  resetAll?(): void
}

/** The store interface of express-rate-limit 6 and later (`rate-limit-redis`, …). */
export type Store = {
  /** Called by each middleware the store is given to, with its options (for `windowMs`). */
  init?(options: Options): void | Promise<void>
  /** The key's hits and reset time, without counting (used by `getKey`). */
  get?(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined
  /** Counts a hit and answers the key's hits and reset time. */
  increment(key: string): Promise<IncrementResponse> | IncrementResponse
  /** Gives one hit back (`skipSuccessfulRequests`, `skipFailedRequests`). */
  decrement(key: string): Promise<void> | void
  /** Forgets the key: its next request counts from 1. */
  resetKey(key: string): Promise<void> | void
  /** Forgets every key. */
  resetAll?(): Promise<void> | void
  /** Releases what the store holds (timers, connections) when the app stops. */
  shutdown?(): Promise<void> | void
  /** True when two instances never share counts (a memory store). */
  localKeys?: boolean
  /** Prepended to keys by the store, when it has one. */
  prefix?: string
}

/** Each coded check by name, or `default` for those not named. */
export type EnabledValidations = {
  [key in
    | 'ip'
    | 'trustProxy'
    | 'xForwardedForHeader'
    | 'forwardedHeader'
    | 'positiveHits'
    | 'unsharedStore'
    | 'singleCount'
    | 'limit'
    | 'draftPolliHeaders'
    | 'onLimitReached'
    | 'headersDraftVersion'
    | 'headersResetTime'
    | 'knownOptions'
    | 'validationsConfig'
    | 'creationStack'
    | 'ipv6Subnet'
    | 'ipv6SubnetOrKeyGenerator'
    | 'keyGeneratorIpFallback'
    | 'windowMs'
    | 'default']?: boolean
}

/** The options, as express-rate-limit documents them; `clock` is Tollgate's (opt-in). */
export type Options = {
  /** How long a key's window lasts. @default 60_000 */
  readonly windowMs: number
  /** Requests per key per window, or a function of the request. @default 5 */
  readonly limit: number | ValueDeterminingMiddleware<number>
  /** The body of a 429, or a function of the request. */
  readonly message: unknown | ValueDeterminingMiddleware<unknown>
  /** @default 429 */
  readonly statusCode: number
  /** `X-RateLimit-*`. @default true */
  readonly legacyHeaders: boolean
  /** The IETF fields: `true` is `'draft-6'`. @default false */
  readonly standardHeaders: boolean | DraftHeadersVersion
  /** The policy name in draft-8 fields. @default `${limit}-in-${window}` */
  readonly identifier: string | ValueDeterminingMiddleware<string>
  /** The `Retry-After` of a denial, in seconds. @default until the window ends */
  readonly retryAfter?: number | ValueDeterminingMiddleware<number> | undefined
  /** Where `RateLimitInfo` is put on the request. @default 'rateLimit' */
  readonly requestPropertyName: string
  readonly skipFailedRequests: boolean
  readonly skipSuccessfulRequests: boolean
  /** @default the IP, IPv6 addresses masked to `ipv6Subnet` */
  readonly keyGenerator: ValueDeterminingMiddleware<string>
  /** @default 56 */
  readonly ipv6Subnet: number | ValueDeterminingMiddleware<number> | false
  readonly handler: RateLimitExceededEventHandler
  readonly skip: ValueDeterminingMiddleware<boolean>
  /** @default status below 400 */
  readonly requestWasSuccessful: ValueDeterminingMiddleware<boolean>
  /**
   * An express-rate-limit store, or a Tollgate store (`memoryStore()`, `redisStore(…)`).
   * @default a `MemoryStore`
   */
  readonly store: Store | LegacyStore | TollgateStore
  /** `false` turns every check off; an object turns checks on or off by name. @default true */
  readonly validate: boolean | EnabledValidations
  /** @deprecated `legacyHeaders` */
  readonly headers?: boolean
  /** @deprecated `limit` */
  readonly max?: number | ValueDeterminingMiddleware<number>
  /** Admit requests while the store fails, instead of passing its error on. @default false */
  readonly passOnStoreError: boolean
  /** @default console (arguments reversed: message first) */
  readonly logger?: Logger
  /**
   * Tollgate: where the time comes from, for the windows of a Tollgate store and the headers.
   * Inject one in tests to drive windows without sleeping. @default Date.now()
   */
  readonly clock?: Clock
}

/** What a request is told about its key, at `request[requestPropertyName]`. */
export type RateLimitInfo = {
  limit: number
  used: number
  remaining: number
  resetTime: Date | undefined
  key: string
}

/** The request with the info added. */
export type AugmentedRequest = Request & { [key: string]: RateLimitInfo }

/** The middleware, with the store's `resetKey` and `getKey`. */
export type RateLimitRequestHandler = RequestHandler & {
  /** Forgets the key in the store: its next request counts from 1. */
  resetKey(key: string): void
  /** The key's hits and reset time from the store, or undefined. */
  getKey(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined
}
