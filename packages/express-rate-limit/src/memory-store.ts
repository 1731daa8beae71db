import {
  type Clock,
  type MemoryStore as CoreMemoryStore,
  memoryStore,
  systemClock,
} from '@tollgate/core'
import { EngineStore, RULE } from './engine-store.js'
import type { ClientRateLimitInfo, Options } from './types.js'
import type { Validations } from './validations.js'

/**
 * The default store: Tollgate's bounded memory store, counting each key in a fixed window that
 * starts at the key's first request, as express-rate-limit's memory store does. As that store,
 * it holds an unref'd timer, set by `init`, that every `windowMs` reclaims the keys whose window
 * has ended; `shutdown` stops it. Counts live in this process only.
 * @example rateLimit({ store: new MemoryStore() })
 */
export class MemoryStore extends EngineStore {
  override localKeys = true
  declare protected store: CoreMemoryStore
  /** The timer that reclaims keys whose window has ended, every `windowMs`; set by `init`. */
  interval: ReturnType<typeof setInterval> | undefined
  readonly #validations: Validations | undefined

  constructor(validations?: Validations, clock: Clock = systemClock) {
    super(memoryStore(), 'first-charge', clock)
    this.#validations = validations
  }

  /**
   * Called by the middleware with its options: checks `windowMs`, takes it, and starts the timer
   * that reclaims ended windows.
   */
  override init(options: Options): void {
    this.#validations?.windowMs(options.windowMs)
    super.init(options)
    // A store given to a second limiter is initialised again: one timer is kept.
    if (this.interval !== undefined) clearInterval(this.interval)
    this.interval = setInterval(() => {
      this.store.sweep(this.now())
    }, this.spanMs)
    // Electron's setInterval answers a number, which has no unref.
    ;(this.interval as { unref?: () => void }).unref?.()
  }

  /** A key whose window has not ended is known with no hits, as after its hits are given back. */
  protected override emptyWindow(key: string, now: number): ClientRateLimitInfo | undefined {
    const until = this.store.heldUntil(RULE, this.window, key)
    return until !== undefined && until > now
      ? { totalHits: 0, resetTime: new Date(until) }
      : undefined
  }

  /** Forgets the key: its next request counts from 1 in a window of its own. */
  override async resetKey(key: string): Promise<void> {
    this.store.forget(RULE, this.window, key)
  }

  /** Forgets every key. */
  async resetAll(): Promise<void> {
    this.store = memoryStore()
  }

  /** Stops the timer and forgets every key. */
  shutdown(): void {
    clearInterval(this.interval)
    this.store = memoryStore()
  }
}
