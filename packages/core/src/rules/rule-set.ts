import type { AlgorithmTable } from '../algorithms/table.js'
import { shown } from '../options/option-values.js'
import type { IssueSink, RuleIssue } from './issues.js'
import { RuleValidationError } from './issues.js'
import type { Rule } from './types.js'
import { isRecord, refuseUnknownFields } from './validate-match.js'
import {
  type FieldLabels,
  isValidatedRule,
  type RuleFields,
  type RuleReaders,
  validateRule,
} from './validate-rule.js'

/** A rule shape (code or file): its known fields and how to read it into `RuleFields`. */
export type RuleShape = {
  readonly fields: readonly string[]
  /** Field names of the other shape → ours, for a better "did you mean". */
  readonly hints: Readonly<Record<string, string>>
  read(
    raw: Record<string, unknown>,
    issue: IssueSink,
  ): { fields: RuleFields; labels: FieldLabels; file?: boolean }
}

/**
 * Validates a whole rule set and returns the frozen models, or throws one `RuleValidationError`
 * listing every problem of every rule (including duplicate ids). Rules may name the algorithms
 * in `algorithms` (the built-in table, or a composed limiter's own); the fields only some
 * limiters take are read by `readers` (a limiter's parts).
 */
export function validateRuleSet(
  items: unknown,
  shape: RuleShape,
  algorithms: AlgorithmTable,
  readers: RuleReaders,
): readonly Rule[] {
  const issues: RuleIssue[] = []
  if (!Array.isArray(items) || items.length === 0) {
    const problem = `expected a non-empty list of rules, got ${shown(items)}`
    throw new RuleValidationError([{ field: 'rules', problem }])
  }
  const rules: Rule[] = []
  const firstIndexOf = new Map<string, number>()
  items.forEach((raw: unknown, index) => {
    const id = isRecord(raw) ? (raw as { id?: unknown }).id : undefined
    const label = typeof id === 'string' && id !== '' ? id : `#${index + 1}`
    const issue: IssueSink = (field, problem) => issues.push({ rule: label, field, problem })
    if (!isRecord(raw)) {
      issue('rule', `expected an object, got ${shown(raw)}`)
      return
    }
    if (typeof id === 'string') {
      const first = firstIndexOf.get(id)
      if (first === undefined) firstIndexOf.set(id, index)
      else issue('id', `duplicate id: rule #${first + 1} has it too`)
    }
    if (isValidatedRule(raw)) {
      rules.push(raw)
      return
    }
    // `{ burst: undefined }` in code is the same as no burst.
    refuseUnknownFields(raw, shape.fields, issue, shape.hints)
    const { fields, labels, file } = shape.read(raw, issue)
    // Undefined only once a problem was reported: the set is then refused.
    rules.push(validateRule(fields, labels, issue, algorithms, readers, file)!)
  })
  if (issues.length > 0) throw new RuleValidationError(issues)
  return Object.freeze(rules)
}
