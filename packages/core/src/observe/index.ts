/**
 * `@tollgate/core/observe`: see what the limiter does. `observedLimiter` tells observers about
 * every verdict, rule outcome, store call, store failure, clock step, queue wait and concurrency
 * slot (the vocabulary is `ObservedEvent`); `shadowReport` keeps whom shadow rules would have
 * hit; `explainDecisions` and `explain` say why a verdict is what it is. Nothing here is in an app that does not import it.
 * See docs/concepts/observability.md.
 * @module @tollgate/core/observe
 */

export { DEBUG_HEADER, type DebugHeaderOptions, debugHeader } from './debug-header.js'
export type {
  ClockStepEvent,
  ConcurrencySlotsEvent,
  DecisionEvent,
  LeaseExpiredEvent,
  ObservableStore,
  ObservedEvent,
  ObservedEventType,
  ObservedLimiterInfo,
  Observer,
  QueueWaitEvent,
  RuleEvent,
  RuleOutcome,
  RulesUpdateEvent,
  StoreCallEvent,
  StoreErrorEvent,
  StoreEvent,
  StoreKind,
} from './events.js'
export {
  type ExplainOptions,
  type Explanation,
  explain,
  onDecision,
  type RuleExplanation,
} from './explain.js'
export { type ObservedLimiterOptions, observedLimiter } from './observed-limiter.js'
export { outcomeOf } from './outcomes.js'
export type { KeyDisplay } from './redact.js'
export {
  type ShadowReport,
  type ShadowReportOptions,
  type ShadowRuleReport,
  shadowReport,
} from './shadow-report.js'
export { type HeavyHitter, SpaceSaving } from './space-saving.js'
