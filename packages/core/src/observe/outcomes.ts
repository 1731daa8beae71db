import type { RuleDecision, StoreErrorContext } from '../limiter/types.js'
import type { RuleMode } from '../rules/types.js'
import type { RuleEvent, RuleOutcome } from './events.js'

/**
 * A decision's outcome in the shared vocabulary. A rule that admits a request another rule
 * denies is `admitted` (its own decision) but charged nothing: the request consumed nothing.
 * An enforcing queue rule's admission with a wait is `queued`; an enforcing concurrency rule's
 * denial (`concurrency` true: no slot was free) is `shed`.
 */
export function outcomeOf(decision: RuleDecision, concurrency = false): RuleOutcome {
  const enforcing = decision.mode === 'enforce'
  if (decision.allowed) {
    return enforcing && (decision.delayMs ?? 0) > 0 ? 'queued' : 'admitted'
  }
  if (!enforcing) return 'shadow-denied'
  return concurrency ? 'shed' : 'denied'
}

/**
 * The rule events of a verdict the store answered: one per decision. Decisions the limiter made
 * up because the store failed are left out: the store failure reports those rules. A queue
 * rule's admission in a request another rule denied waits for nothing: it is `admitted`. The
 * `waited` rules of an admitted request gave it their slot after a wait: `queued`.
 */
export function ruleEventsOf(
  allowed: boolean,
  decisions: readonly RuleDecision[],
  concurrencyRules: ReadonlySet<string>,
  emit: (event: RuleEvent) => void,
  waited?: ReadonlySet<string>,
): void {
  for (let i = 0; i < decisions.length; i++) {
    const d = decisions[i]!
    if (d.storeFailed === true) continue
    const outcome =
      allowed && waited?.has(d.rule) === true
        ? 'queued'
        : outcomeOf(d, concurrencyRules.has(d.rule))
    emit({
      type: 'rule',
      rule: d.rule,
      mode: d.mode,
      outcome: outcome === 'queued' && !allowed ? 'admitted' : outcome,
      charged: allowed && d.allowed ? d.cost : 0,
      remaining: d.remaining,
      limit: d.limit,
      ...(d.degraded === true && { degraded: true }),
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
