export { defineRules } from './define-rules.js'
export { formatIssue, type RuleIssue, RuleValidationError } from './issues.js'
export { parseRules } from './parse-rules.js'
export { HTTP_METHODS, type ParsedRoute, parseRoute, type RouteSegment } from './route.js'
export type {
  ConcurrencyAlgorithmName,
  ConcurrencyRule,
  ConcurrencyRuleConfig,
  Duration,
  IdentityName,
  Milliseconds,
  MissingIdentityPolicy,
  PenaltyConfig,
  PenaltyRule,
  QueueRule,
  QueueRuleConfig,
  RateAlgorithmName,
  RateRule,
  RateRuleConfig,
  Rule,
  RuleConfig,
  RuleMatch,
  RuleMatchConfig,
  RuleMode,
  RulesMustBeLiteral,
  StoreErrorPolicy,
  WidenedRulesError,
  WindowAlgorithmName,
  WindowRule,
  WindowRuleConfig,
} from './types.js'
