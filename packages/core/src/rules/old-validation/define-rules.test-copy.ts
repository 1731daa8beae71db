// The rule validation as it was before its texts were shortened and its algorithm-specific
// refusals moved to the factories (commit 8b52371), for validation-differential.test.ts.
import type { AlgorithmTable } from '../../algorithms/table.js'
import type { Rule, RuleConfig } from '../types.js'
import { ROUTES } from '../validate-routes.js'
import { validateSettle } from '../validate-settle.js'
import { type RuleShape, validateRuleSet } from './rule-set.test-copy.js'
import { validatePenalty } from './validate-penalty.test-copy.js'
import { type FieldLabels, RULE_FIELDS, type RuleReaders } from './validate-rule.test-copy.js'

/** Every reader: what a limiter with every part reads, and rules files. */
export const EVERY_READER: RuleReaders = {
  routes: ROUTES,
  penalties: { validate: validatePenalty },
  reservations: { validateSettle },
}

const CODE_SHAPE: RuleShape = {
  fields: RULE_FIELDS,
  hints: {
    rate_per_s: 'rate',
    period_s: 'period',
    window_s: 'window',
    time_zone: 'timeZone',
    max_wait_s: 'maxWait',
    queue_order: 'queueOrder',
  },
  // In code, each field is labelled with its own name.
  read: (raw) => ({
    fields: raw,
    labels: Object.fromEntries(RULE_FIELDS.map((field) => [field, field])) as FieldLabels,
  }),
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
