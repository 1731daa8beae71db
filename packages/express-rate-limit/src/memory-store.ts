import { type Clock, memoryStore, systemClock } from '@tollgate/core'
import { EngineStore } from './engine-store.js'
import type { Options } from './types.js'
import type { Validations } from './validations.js'

/**
 * The default store: Tollgate's bounded memory store, counting each key in a fixed window that
 * starts at the key's first request, as express-rate-limit's memory store does. Expired keys
 * are reclaimed as they are met, so it holds no timer. Counts live in this process only.
 * @example rateLimit({ store: new MemoryStore() })
 */
export class MemoryStore extends EngineStore {
  override localKeys = true
  readonly #validations: Validations | undefined

  constructor(validations?: Validations, clock: Clock = systemClock) {
    super(memoryStore(), 'first-charge', clock)
    this.#validations = validations
  }

  override init(options: Options): void {
    this.#validations?.windowMs(options.windowMs)
    super.init(options)
  }

  /** Forgets every key. */
  async resetAll(): Promise<void> {
    this.store = memoryStore()
  }

  /** Forgets every key; the store holds no timer to stop. */
  shutdown(): void {
    this.store = memoryStore()
  }
}
