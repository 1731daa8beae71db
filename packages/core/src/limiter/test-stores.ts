import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Outcome, Store } from '../store/types.js'
import type { Limiter, RequestFacts, Verdict } from './types.js'

/*
 * The limiter over each shape of store it meets: one with the synchronous `consumeOne` fast
 * path, a synchronous one without it, and one answering through promises as a remote store
 * does. All three keep their state in a memory store; whether stores themselves keep the
 * contract is the store conformance suite's job (test/stores).
 */

/** The memory store seen only through the `Store` interface: no `consumeOne`. */
function withoutFastPath(): Store {
  const inner = memoryStore()
  return {
    consume: (charges, now): Outcome => inner.consume(charges, now),
    refund: (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
    settle: (settlements, chargedAt, now) => inner.settle(settlements, chargedAt, now),
    consumePenalised: (charges, now) => inner.consumePenalised(charges, now),
  }
}

/** The memory store answering through promises, as a remote store does. */
function asyncStore(): Store {
  const inner = memoryStore()
  return {
    consume: async (charges, now) => inner.consume(charges, now),
    refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
    settle: async (settlements, chargedAt, now) => inner.settle(settlements, chargedAt, now),
    consumePenalised: async (charges, now) => inner.consumePenalised(charges, now),
  }
}

export const STORES = [
  ['memory store (consumeOne)', () => memoryStore()],
  ['sync store without consumeOne', withoutFastPath],
  ['async store', asyncStore],
] as const

/** Decides the same request `count` times at `now`, in order. */
export async function decideTimes(
  limiter: Limiter,
  facts: RequestFacts,
  count: number,
  now: number,
) {
  const verdicts: Verdict[] = []
  for (let i = 0; i < count; i++) verdicts.push(await limiter.decide(facts, { now }))
  return verdicts
}

/** A token bucket keyed on the client IP with the given store-failure policy (5 at once, 1/s). */
export const failureRule = (
  id: string,
  onStoreError: 'open' | 'closed',
  extra: Partial<RuleConfig> = {},
): RuleConfig =>
  ({
    id,
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    burst: 5,
    onStoreError,
    ...extra,
  }) as RuleConfig

/** A request every `failureRule` matches. */
export const PAYMENT = { method: 'POST', path: '/v1/pay', identities: { ip: '192.0.2.1' } }
