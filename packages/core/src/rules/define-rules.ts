import { type AlgorithmTable, BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { type RuleShape, validateRuleSet } from './rule-set.js'
import type { Rule, RuleConfig } from './types.js'
import { validatePenalty } from './validate-penalty.js'
import { ROUTES } from './validate-routes.js'
import { type FieldLabels, RULE_FIELDS, type RuleReaders } from './validate-rule.js'
import { validateSettle } from './validate-settle.js'

/** Every reader: what a limiter with every part reads, and rules files. */
export const EVERY_READER: RuleReaders = {
  routes: ROUTES,
  penalties: { validate: validatePenalty },
  reservations: { validateSettle },
}

const CODE_SHAPE: RuleShape = {
  fields: RULE_FIELDS,
  // The other file names (`period_s`, `time_zone`…) are close enough to their own for a typo.
  hints: { rate_per_s: 'rate' },
  // In code, each field is labelled with its own name.
  read: (raw) => ({
    fields: raw,
    labels: Object.fromEntries(RULE_FIELDS.map((field) => [field, field])) as FieldLabels,
  }),
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
  return checkRules(rules, BUILT_IN_ALGORITHMS, EVERY_READER)
}

/**
 * `defineRules` for rules that may name only the algorithms in `algorithms`, with the fields
 * only some limiters take read by `readers` (a limiter's parts: one composed without route
 * matching or penalties refuses every route or penalty).
 */
export function checkRules(
  rules: readonly RuleConfig[],
  algorithms: AlgorithmTable,
  readers: RuleReaders,
): readonly Rule[] {
  return validateRuleSet(rules, CODE_SHAPE, algorithms, readers)
}
