import type { RuleConfig } from '../rules/types.js'
import { applyCharges } from '../store/apply-charges.js'
import { memoryStore } from '../store/memory-store.js'
import type { Outcome, Store } from '../store/types.js'
import type { Limiter, RequestFacts, Verdict } from './types.js'

/** A plain Map store built on applyCharges: synchronous, without the consumeOne fast path. */
function mapStore(): Store {
  const states = new Map<string, number[]>()
  const stateOf = (rule: string, key: string, size: number, init: (s: number[]) => void) => {
    const id = JSON.stringify([rule, key])
    let state = states.get(id)
    if (state === undefined) {
      state = new Array<number>(size).fill(0)
      init(state)
      states.set(id, state)
    }
    return state
  }
  return {
    consume(charges, now): Outcome {
      const slots = charges.map((c) =>
        stateOf(c.rule, c.key, c.algorithm.stateSize, (s) => c.algorithm.init(s, 0, now)),
      )
      return {
        decisions: applyCharges(
          charges,
          slots,
          slots.map(() => 0),
          now,
        ),
        at: now,
      }
    },
    refund(charges, chargedAt, now) {
      for (const c of charges) {
        const state = stateOf(c.rule, c.key, c.algorithm.stateSize, (s) =>
          c.algorithm.init(s, 0, now),
        )
        c.algorithm.refund(state, 0, c.cost, chargedAt, now)
      }
    },
  }
}

/** The same store answering through promises, as a remote store does. */
function asyncStore(): Store {
  const inner = mapStore()
  return {
    consume: async (charges, now) => inner.consume(charges, now),
    refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
  }
}

export const STORES = [
  ['memory store (consumeOne)', () => memoryStore()],
  ['sync store without consumeOne', mapStore],
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
