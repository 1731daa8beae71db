import type { Charge, Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import type { Pending } from './decide.js'
import type { RefuseRules } from './rule-set.js'
import type { Engine } from './engine.js'
import type { RuleDecision } from './types.js'
import { storeDecision } from './verdict.js'

// The rules whose onStoreError is 'fallback', decided in this process after the store failed.
// The limiter only routes them: the store's `consumeLocally` (fallbackStore) owns the local
// state, each rule's share and what is reconciled afterwards.

/**
 * Local fallback, as a part of a limiter: the rules with `onStoreError: 'fallback'` decided in
 * this process while the store fails (with `fallbackStore`). `createLimiter` and `rateLimit` have
 * it; a middleware made by `createRateLimit` has it when its parts name it
 * (`createRateLimit({ algorithms, localFallback })`), and refuses such a rule otherwise.
 */
export const localFallback: FallbackPart = { decide: decideLocally, checkStore }

/** What local fallback adds to a limiter (see `localFallback`). */
export type FallbackPart = {
  /** The degraded decisions of a request's rules that fall back, after the store failed. */
  readonly decide: typeof decideLocally
  /** Refuses, at start-up, a store that cannot decide locally (`refuse` names the rules). */
  readonly checkStore: typeof checkStore
}

/** Rules that fall back need a store that decides locally. */
function checkStore(store: Store, refuse: RefuseRules): void {
  if (typeof store.consumeLocally !== 'function') {
    refuse(
      'store',
      (rule) => rule.fallback,
      "have onStoreError: 'fallback': wrap the store in fallbackStore(store, { instances })",
    )
  }
}

/**
 * The degraded decisions of the charged rules that fall back, in rule order, or undefined when
 * none does, or when deciding them locally failed too (reported; they then fail open, as a rule
 * with no store to fall back on would).
 */
function decideLocally(
  engine: Engine,
  { rules, plan }: Pending,
  now: number,
): RuleDecision[] | undefined {
  const store = engine.store
  if (typeof store.consumeLocally !== 'function') return undefined
  const fallback: CompiledRule[] = []
  const picked: Charge[] = []
  plan.forEach((step, i) => {
    const rule = rules[i]!
    if (!('algorithm' in step && rule.fallback)) return
    fallback.push(rule)
    picked.push(step)
  })
  if (fallback.length === 0) return undefined
  try {
    // Each decision is checked as the store's are: a missing or malformed one throws.
    const decisions = store.consumeLocally(picked, now).decisions
    return fallback.map((rule, i): RuleDecision => {
      const charge = picked[i]!
      return { ...storeDecision(rule, decisions[i], charge.cost, charge.key), degraded: true }
    })
  } catch (error) {
    engine.reporter.storeError(
      error,
      'consume',
      fallback.map((rule) => rule.id),
    )
    return undefined
  }
}
