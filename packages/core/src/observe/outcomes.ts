import type { RuleDecision, StoreErrorContext } from '../limiter/types.js'
import type { RuleMode } from '../rules/types.js'
import type { RuleEvent, RuleOutcome } from './events.js'

/**
 * A decision's outcome in the shared vocabulary. A rule that admits a request another rule
 * denies is `admitted` (its own decision) but charged nothing: the request consumed nothing.
 */
export function outcomeOf(decision: RuleDecision): RuleOutcome {
  if (decision.allowed) return 'admitted'
  return decision.mode === 'shadow' ? 'shadow-denied' : 'denied'
}

/**
 * The rule events of a verdict the store answered: one per decision. Decisions the limiter made
 * up because the store failed are left out: the store failure reports those rules.
 */
export function ruleEventsOf(
  allowed: boolean,
  decisions: readonly RuleDecision[],
  emit: (event: RuleEvent) => void,
): void {
  for (let i = 0; i < decisions.length; i++) {
    const d = decisions[i]!
    if (d.storeFailed === true) continue
    emit({
      type: 'rule',
      rule: d.rule,
      mode: d.mode,
      outcome: outcomeOf(d),
      charged: allowed && d.allowed ? d.cost : 0,
      remaining: d.remaining,
      limit: d.limit,
    })
  }
}

/**
 * The rule events of a store failure on consume: every rule whose charge the store was asked
 * for. The request was let through unless a fail-closed enforcing rule was among them; a shadow
 * rule never refuses.
 */
export function failureEventsOf(
  context: StoreErrorContext,
  modes: ReadonlyMap<string, RuleMode>,
  emit: (event: RuleEvent) => void,
): void {
  for (const rule of context.rules) {
    const mode = modes.get(rule) ?? 'enforce'
    const closed = context.failClosed && mode === 'enforce'
    emit({
      type: 'rule',
      rule,
      mode,
      outcome: closed ? 'store-failed-closed' : 'store-failed-open',
      charged: 0,
      remaining: undefined,
      limit: undefined,
    })
  }
}
