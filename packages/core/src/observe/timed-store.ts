import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { isPromiseLike } from '../limiter/engine.js'
import type { Store } from '../store/types.js'
import type { StoreKind } from './events.js'
import type { Emit } from './fan-out.js'

type Performance = { now(): number }

/** A monotonic clock in ms where the runtime has one (every runtime Tollgate runs on does). */
export const elapsed: () => number = (() => {
  const performance = (globalThis as { performance?: Performance }).performance
  return typeof performance?.now === 'function' ? () => performance.now() : () => Date.now()
})()

/** How events name a store: by what it is, never by anything it holds. */
export function storeKindOf(store: Store): StoreKind {
  const shaped = store as Partial<Record<'bytes' | 'evictions' | 'keyOf' | 'scripts', unknown>>
  if (typeof shaped.bytes === 'number' && typeof shaped.evictions === 'number') return 'memory'
  if (typeof shaped.keyOf === 'function' && typeof shaped.scripts === 'function') return 'redis'
  return 'custom'
}

/** A bounded name for an error: its `ERR_RL_*` code, or `error`. */
export function reasonOf(error: unknown): string {
  try {
    return error instanceof RateLimitError ? error.code : 'error'
  } catch {
    return 'error'
  }
}

type ConsumeOne = (
  rule: string,
  algorithm: Algorithm,
  key: string,
  cost: number,
  now: number,
) => Decision

/**
 * `store` with every call timed and reported as a `store.call` event. Its fast path for one
 * charge (`consumeOne`, the memory store's) and its own budget (`timeoutMs`) are kept, so the
 * limiter decides exactly as it would with the store itself.
 */
export function timedStore(store: Store, kind: StoreKind, emit: Emit): Store {
  function timed<T>(operation: 'consume' | 'refund', call: () => T): T {
    const start = elapsed()
    const report = (error: unknown) =>
      emit({
        type: 'store.call',
        store: kind,
        operation,
        durationMs: elapsed() - start,
        error: error === undefined ? undefined : reasonOf(error),
      })
    let result: T
    try {
      result = call()
    } catch (error) {
      report(error ?? 'error')
      throw error
    }
    if (!isPromiseLike(result)) {
      report(undefined)
      return result
    }
    return Promise.resolve(result).then(
      (settled) => {
        report(undefined)
        return settled
      },
      (error: unknown) => {
        report(error ?? 'error')
        throw error
      },
    ) as T
  }
  const timedStore: Store & { consumeOne?: ConsumeOne } = {
    consume: (charges, now) => timed('consume', () => store.consume(charges, now)),
    refund: (charges, chargedAt, now) =>
      timed('refund', () => store.refund(charges, chargedAt, now)),
    ...(store.timeoutMs === undefined ? {} : { timeoutMs: store.timeoutMs }),
  }
  const consumeOne = (store as { consumeOne?: ConsumeOne }).consumeOne
  if (typeof consumeOne === 'function') {
    timedStore.consumeOne = (rule, algorithm, key, cost, now) =>
      timed('consume', () => consumeOne.call(store, rule, algorithm, key, cost, now))
  }
  return timedStore
}
