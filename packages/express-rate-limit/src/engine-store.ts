import {
  type Algorithm,
  type Clock,
  fixedWindow,
  type Store as TollgateStore,
} from '@tollgate/core'
import type { ClientRateLimitInfo, Options, Store } from './types.js'

/**
 * The count a window may reach: express-rate-limit counts every request, denied ones too, and
 * compares the count with the limit of each request, so the store's window never refuses.
 * The largest count the fixed window keeps exactly.
 */
const COUNT_ALL = 999_999_999_999_999
/** The rule id the store keeps this middleware's keys under. */
export const RULE = 'express-rate-limit'
/** The longest window a timer can hold, as express-rate-limit's memory store allows. */
const MAX_WINDOW_MS = 2 ** 31 - 1

/** The store's synchronous increment, when it has one: the middleware then needs no promise. */
export const INCREMENT_NOW: unique symbol = Symbol('incrementNow')

export type AnyIncrement = ClientRateLimitInfo | Promise<ClientRateLimitInfo>

/**
 * express-rate-limit's store interface over a Tollgate store: each key's hits are counted by
 * Tollgate's fixed window (`fixedWindow`, denied requests counted too), in the Tollgate store.
 * With `anchor: 'epoch'` (a Tollgate store given as `store`), windows lie on multiples of
 * `windowMs` since the epoch, the same in every process that shares the store; with
 * `'first-charge'` (the default `MemoryStore`), each key's window starts at its first request,
 * as express-rate-limit's do.
 */
export class EngineStore implements Store {
  localKeys: boolean
  windowMs = 60_000
  protected store: TollgateStore
  /** The window a timer may hold: `windowMs` as a whole number of ms, 1 to 2^31 − 1. */
  protected spanMs = this.windowMs
  #window: Algorithm
  #anchor: 'epoch' | 'first-charge'
  #clock: Clock

  constructor(store: TollgateStore, anchor: 'epoch' | 'first-charge', clock: Clock) {
    this.store = store
    this.localKeys = store.shared !== true
    this.#anchor = anchor
    this.#clock = clock
    this.#window = fixedWindow({ limit: COUNT_ALL, windowMs: this.windowMs, anchor })
  }

  /**
   * Called by the middleware with its options: the store takes `windowMs` (and `clock`) from them.
   */
  init(options: Options): void {
    this.windowMs = options.windowMs
    if (options.clock !== undefined) this.#clock = options.clock
    // express-rate-limit only warns about a window that is not a whole positive number of ms
    // (ERR_ERL_WINDOW_MS); the closest window that works is used.
    const ms = Number(this.windowMs)
    this.spanMs = ms >= 1 ? Math.min(Math.floor(ms), MAX_WINDOW_MS) : 1
    this.#window = fixedWindow({ limit: COUNT_ALL, windowMs: this.spanMs, anchor: this.#anchor })
  }

  /** The fixed window the store counts each key's hits in. */
  protected get window(): Algorithm {
    return this.#window
  }

  /** The clock's time, in ms. */
  protected now(): number {
    return this.#clock.now()
  }

  /**
   * `increment` without the promise when the store answers synchronously: what the middleware
   * calls. Not for application code.
   */
  [INCREMENT_NOW](key: string): AnyIncrement {
    const now = this.#clock.now()
    const store = this.store as TollgateStore & { consumeOne?: ConsumeOne }
    if (store.consumeOne !== undefined) {
      return hitsOf(store.consumeOne(RULE, this.#window, key, 1, now), now)
    }
    const outcome = store.consume([this.#charge(key, 1)], now)
    if (outcome instanceof Promise) return outcome.then((o) => hitsOf(o.decisions[0]!, o.at))
    return hitsOf(outcome.decisions[0]!, outcome.at)
  }

  /** Counts a hit for `key` and answers its count and reset time. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    return this[INCREMENT_NOW](key)
  }

  /** Gives one hit back (`skipSuccessfulRequests`, `skipFailedRequests`). */
  async decrement(key: string): Promise<void> {
    const now = this.#clock.now()
    await this.store.refund([this.#charge(key, 1)], now, now)
  }

  /** The key's count and reset time, or undefined when it has none; counts nothing. */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const now = this.#clock.now()
    const outcome = await this.store.consume([this.#charge(key, 0)], now)
    const info = hitsOf(outcome.decisions[0]!, outcome.at)
    return info.totalHits === 0 ? this.emptyWindow(key, outcome.at) : info
  }

  /**
   * What `get` answers for a key with no hits in its window at `now`. A store that cannot tell
   * a key it holds from one it never saw answers that it knows none.
   */
  protected emptyWindow(_key: string, _now: number): ClientRateLimitInfo | undefined {
    return undefined
  }

  /** Gives back the key's count: its next request counts from 1. */
  async resetKey(key: string): Promise<void> {
    const counted = await this.get(key)
    if (counted === undefined) return
    const now = this.#clock.now()
    await this.store.refund([this.#charge(key, counted.totalHits)], now, now)
  }

  #charge(key: string, cost: number) {
    return { rule: RULE, algorithm: this.#window, key, cost, shadow: false }
  }
}

type ConsumeOne = (
  rule: string,
  algorithm: Algorithm,
  key: string,
  cost: number,
  now: number,
) => { remaining: number; resetAfterMs: number }

function hitsOf(
  decision: { remaining: number; resetAfterMs: number },
  now: number,
): ClientRateLimitInfo {
  return {
    totalHits: COUNT_ALL - decision.remaining,
    resetTime: new Date(now + decision.resetAfterMs),
  }
}
