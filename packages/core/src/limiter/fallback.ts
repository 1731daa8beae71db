import type { Charge, Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { inRuleOrder, type Pending } from './decide.js'
import type { Engine } from './engine.js'
import type { Reporter } from './report.js'
import type { RefuseRules } from './rule-set.js'
import type { RuleDecision, Verdict } from './types.js'
import { combine, storeDecision } from './verdict.js'

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
  /** The verdict of a request whose rules that fall back decide it, after the store failed. */
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
 * The verdict of a request whose store call failed (`error`, reported here), decided by those of
 * its `charged` rules that fall back, in this process, their decisions marked `degraded` (the
 * other rules pass, with no figures); undefined when none falls back, or when deciding them
 * locally failed too (reported; they then fail open, as a rule with no store to fall back on
 * would).
 */
function decideLocally(
  engine: Engine,
  pending: Pending,
  charged: readonly CompiledRule[],
  error: unknown,
  now: number,
): Verdict | undefined {
  const { rules, plan } = pending
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
  let local: RuleDecision[]
  try {
    // Each decision is checked as the store's are: a missing or malformed one throws.
    const decisions = store.consumeLocally(picked, now).decisions
    local = fallback.map((rule, i): RuleDecision => {
      const charge = picked[i]!
      return { ...storeDecision(rule, decisions[i], charge.cost, charge.key), degraded: true }
    })
  } catch (localError) {
    engine.reporter.storeError(
      localError,
      'consume',
      fallback.map((rule) => rule.id),
    )
    return undefined
  }
  reportFallback(
    engine.reporter,
    error,
    charged.filter((rule) => !rule.fallback).map((rule) => rule.id),
    local.map((d) => d.rule),
  )
  // Decided in this process, the verdict is the local decisions': not a store failure.
  let next = 0
  return combine(
    inRuleOrder(pending, (rule) => (rule.fallback ? local[next++] : undefined)),
    now,
  )
}

/**
 * A store failure some rules (`fallback`) were decided through in this process: `onError` hears
 * them apart from the other `rules` (which passed), or one warning names both.
 */
export function reportFallback(
  reporter: Reporter,
  error: unknown,
  rules: readonly string[],
  fallback: readonly string[],
): void {
  reporter.report(
    error,
    { operation: 'consume', rules, failClosed: false, fallback },
    rules.concat(fallback),
    `${fallback.join(', ')} decided in this process (fallback)`,
  )
}
