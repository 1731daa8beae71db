import { RateLimitError } from '../errors.js'
import { problemList } from '../options/unknown-options.js'

/** One problem found in a rule set. */
export type RuleIssue = {
  /**
   * The rule's id, or `#n` (its position, from #1) when it has no usable id; absent for a
   * problem of the whole set (not a list, an empty list, a file that is not YAML or JSON).
   */
  readonly rule?: string | undefined
  /** The field as the user wrote it, e.g. `burst`, `window_s`, `match.identity`. */
  readonly field: string
  readonly problem: string
}

/**
 * A rule set that cannot work. Every problem found is listed, in `issues` and one per line in
 * the message (`rule "<id>": <field>: <problem>`); `rule` and `field` name the first.
 */
export class RuleValidationError extends RateLimitError {
  readonly issues: readonly RuleIssue[]

  constructor(issues: readonly RuleIssue[]) {
    const message = problemList(issues.map(formatIssue))
    // The first issue names the rule and the field.
    super('ERR_RL_INVALID_RULE', message, issues[0])
    this.issues = issues
  }
}

/**
 * One issue as `RuleValidationError` lists it: `rule "<id>": <field>: <problem>`, for a tool that
 * reports issues itself.
 */
export function formatIssue(issue: RuleIssue): string {
  // A whole-set problem names no rule: a "rule #0" would be a position no rule has.
  if (issue.rule === undefined) return `${issue.field}: ${issue.problem}`
  const rule = issue.rule.startsWith('#') ? `rule ${issue.rule}` : `rule "${issue.rule}"`
  return `${rule}: ${issue.field}: ${issue.problem}`
}

/** Collects the problems of one rule under its label. */
export type IssueSink = (field: string, problem: string) => void

/**
 * How a limiter composed without `part` answers a rule or an option that needs it, naming the
 * part to add as an option needing a part left out does: `needs penalties in createRateLimit's
 * parts`, `needs routes: routeMatching in …`.
 */
export function composedWithout(part: string): string {
  return `needs ${part} in createRateLimit's parts`
}
