import { type AlgorithmTable, BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { parseRoute, type RouteParser } from './route.js'
import { type RuleShape, validateRuleSet } from './rule-set.js'
import type { Rule, RuleConfig } from './types.js'
import { type PenaltyReader, validatePenalty } from './validate-penalty.js'
import type { FieldLabels } from './validate-rule.js'

const LABELS: FieldLabels = {
  id: 'id',
  description: 'description',
  match: 'match',
  algorithm: 'algorithm',
  rate: 'rate',
  period: 'period',
  burst: 'burst',
  delay: 'delay',
  nodelay: 'nodelay',
  maxWait: 'maxWait',
  queue: 'queue',
  queueOrder: 'queueOrder',
  limit: 'limit',
  window: 'window',
  timeZone: 'timeZone',
  buckets: 'buckets',
  cost: 'cost',
  costByRoute: 'costByRoute',
  mode: 'mode',
  onStoreError: 'onStoreError',
  onMissingIdentity: 'onMissingIdentity',
  settle: 'settle',
  penalty: 'penalty',
  onChange: 'onChange',
  version: 'version',
}

const CODE_SHAPE: RuleShape = {
  fields: /* @__PURE__ */ Object.values(LABELS),
  hints: {
    rate_per_s: 'rate',
    period_s: 'period',
    window_s: 'window',
    time_zone: 'timeZone',
    max_wait_s: 'maxWait',
    queue_order: 'queueOrder',
  },
  read: (raw) => ({ fields: raw, labels: LABELS }),
}

/**
 * Validates rules written in TypeScript (camelCase) and returns them frozen and normalised.
 * Every problem of every rule is reported at once, in one `RateLimitError`
 * (`ERR_RL_INVALID_RULE`, a `RuleValidationError` with the list in `issues`).
 * @example
 * const rules = defineRules([
 *   { id: 'free-global', match: { plan: 'free', identity: 'api_key' },
 *     algorithm: 'token_bucket', rate: 10, burst: 20 },
 *   { id: 'login-per-ip', match: { route: 'POST /v1/login', identity: 'ip' },
 *     algorithm: 'sliding_log', limit: 5, window: '60s', onStoreError: 'closed' },
 * ])
 */
export function defineRules(rules: readonly RuleConfig[]): readonly Rule[] {
  return checkRules(rules, BUILT_IN_ALGORITHMS, parseRoute, validatePenalty)
}

/**
 * `defineRules` for rules that may name only the algorithms in `algorithms`, with routes read
 * by `parseRoute` (a lean limiter's refuses every route) and penalties read by `penaltyOf`
 * (none: every penalty refused, as a limiter composed without penalties refuses them).
 */
export function checkRules(
  rules: readonly RuleConfig[],
  algorithms: AlgorithmTable,
  parseRoute: RouteParser,
  penaltyOf: PenaltyReader | undefined,
): readonly Rule[] {
  return validateRuleSet(rules, CODE_SHAPE, algorithms, parseRoute, penaltyOf)
}
