import { isRateLimitError } from '@tollgate/core/store'
import { objectDecisions } from './object-decisions.js'
import { type LimiterStorage, stateTable } from './object-states.js'
import type { ObjectReply, ObjectRequest } from './wire.js'

/** The parts of a Durable Object's state (`ctx`) the limiter object uses. */
export type LimiterObjectState = {
  readonly storage: LimiterStorage
  /** Holds requests back while the object loads its states from storage. */
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>
}

/**
 * The Durable Object that holds one key's rate-limit state and decides its requests. Export it
 * from the Worker and bind it (wrangler: `durable_objects.bindings` with `class_name =
 * "TollgateLimiter"`, and a migration with `new_sqlite_classes`); `durableObjectStore` sends it
 * one request per decision.
 *
 * Its states are written through to the object's durable storage, so an object evicted from
 * memory, restarted or moved loses nothing; its alarm deletes them once they are back to full
 * capacity.
 * @example
 * export { TollgateLimiter } from '@tollgate/cloudflare'
 */
export class TollgateLimiter {
  readonly #table: ReturnType<typeof stateTable>
  readonly #decide: ReturnType<typeof objectDecisions>

  constructor(ctx: LimiterObjectState, _env?: unknown) {
    this.#table = stateTable(ctx.storage)
    this.#decide = objectDecisions(this.#table)
    // No request is delivered before the states are in memory; decisions then read no storage.
    void ctx.blockConcurrencyWhile(() => this.#table.load())
  }

  /**
   * Answers the store's calls (`durableObjectStore`): decides a key's charges on the states it
   * holds. The runtime calls it; not for application code.
   */
  async fetch(request: Request): Promise<Response> {
    let reply: ObjectReply
    try {
      reply = await this.#decide((await request.json()) as ObjectRequest, Date.now())
    } catch (error) {
      // A bad rule or cost travels back to be thrown in the caller as it was; anything else
      // (storage failing) is the store being unavailable: a 500 the store reports so.
      if (!isRateLimitError(error)) throw error
      const message = error.message.replace(/^\[tollgate\] /, '')
      const { code, rule, field } = error
      reply = { error: { code, message, rule, field } }
    }
    return Response.json(reply)
  }

  /** Deletes the states back to full capacity; set by every write for the last of them. */
  async alarm(): Promise<void> {
    await this.#table.expire(Date.now())
  }
}
