import type { Decision } from '../decision.js'
import { RateLimitError } from '../errors.js'
import { type ConsumeOne, isPromiseLike } from '../limiter/engine.js'
import type { Store } from '../store/types.js'
import type { StoreKind } from './events.js'
import type { Emit } from './fan-out.js'

type Performance = { now(): number }

/** A monotonic clock in ms where the runtime has one (every runtime Tollgate runs on does). */
export const elapsedMs: () => number = (() => {
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

/** Reports one finished call; `error` undefined when it succeeded. */
function reported(
  elapsed: () => number,
  emit: Emit,
  store: StoreKind,
  operation: 'consume' | 'refund' | 'settle',
  start: number,
  error: unknown,
): void {
  emit({
    type: 'store.call',
    store,
    operation,
    durationMs: elapsed() - start,
    error: error === undefined ? undefined : reasonOf(error),
  })
}

/** Reports a call's result (a promise when it settles) and hands it back. */
function settled<T>(
  elapsed: () => number,
  emit: Emit,
  kind: StoreKind,
  operation: 'consume' | 'refund' | 'settle',
  start: number,
  result: T,
): T {
  if (!isPromiseLike(result)) {
    reported(elapsed, emit, kind, operation, start, undefined)
    return result
  }
  return Promise.resolve(result).then(
    (value) => {
      reported(elapsed, emit, kind, operation, start, undefined)
      return value
    },
    (error: unknown) => {
      reported(elapsed, emit, kind, operation, start, error ?? 'error')
      throw error
    },
  ) as T
}

/**
 * `store` with every call timed and reported as a `store.call` event. Its fast path for one
 * charge (`consumeOne`, the memory store's) and its own budget (`timeoutMs`) are kept, so the
 * limiter decides exactly as it would with the store itself. No closure is made per call.
 */
export function timedStore(
  store: Store,
  kind: StoreKind,
  emit: Emit,
  elapsed: () => number,
): Store {
  const timed: Store & { consumeOne?: ConsumeOne } = {
    consume(charges, now) {
      const start = elapsed()
      try {
        return settled(elapsed, emit, kind, 'consume', start, store.consume(charges, now))
      } catch (error) {
        reported(elapsed, emit, kind, 'consume', start, error ?? 'error')
        throw error
      }
    },
    refund(charges, chargedAt, now) {
      const start = elapsed()
      try {
        return settled(elapsed, emit, kind, 'refund', start, store.refund(charges, chargedAt, now))
      } catch (error) {
        reported(elapsed, emit, kind, 'refund', start, error ?? 'error')
        throw error
      }
    },
    ...(store.timeoutMs === undefined ? {} : { timeoutMs: store.timeoutMs }),
  }
  const settle = store.settle
  if (typeof settle === 'function') {
    timed.settle = (settlements, chargedAt, now) => {
      const start = elapsed()
      try {
        const done = settle.call(store, settlements, chargedAt, now)
        return settled(elapsed, emit, kind, 'settle', start, done)
      } catch (error) {
        reported(elapsed, emit, kind, 'settle', start, error ?? 'error')
        throw error
      }
    }
  }
  const penalised = store.consumePenalised
  if (typeof penalised === 'function') {
    // Timed as a consume: it is the call that decides a request with penalised rules.
    timed.consumePenalised = (charges, now) => {
      const start = elapsed()
      try {
        return settled(elapsed, emit, kind, 'consume', start, penalised.call(store, charges, now))
      } catch (error) {
        reported(elapsed, emit, kind, 'consume', start, error ?? 'error')
        throw error
      }
    }
  }
  // The operator's calls are an admin's, not a request's: passed through, untimed.
  for (const name of ['peek', 'reset', 'block', 'unblock'] as const) {
    const method = store[name]
    if (typeof method === 'function') Object.assign(timed, { [name]: method.bind(store) })
  }
  // Decided in memory, in this process (fallbackStore): passed on as it is, untimed.
  const consumeLocally = store.consumeLocally
  if (typeof consumeLocally === 'function') timed.consumeLocally = consumeLocally.bind(store)
  const consumeOne = (store as { consumeOne?: ConsumeOne }).consumeOne
  if (typeof consumeOne === 'function') {
    const one = consumeOne.bind(store)
    timed.consumeOne = (rule, algorithm, key, cost, now) => {
      const start = elapsed()
      let decision: Decision
      try {
        decision = one(rule, algorithm, key, cost, now)
      } catch (error) {
        reported(elapsed, emit, kind, 'consume', start, error ?? 'error')
        throw error
      }
      reported(elapsed, emit, kind, 'consume', start, undefined)
      return decision
    }
  }
  return timed
}
