import { RateLimitError } from '../errors.js'

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
    const lines = issues.map(formatIssue)
    const message =
      lines.length === 1
        ? lines[0]!
        : `${lines.length} problems in the rules:\n  ${lines.join('\n  ')}`
    super('ERR_RL_INVALID_RULE', message, { rule: issues[0]?.rule, field: issues[0]?.field })
    this.issues = issues
  }
}

export function formatIssue(issue: RuleIssue): string {
  // A whole-set problem names no rule: a "rule #0" would be a position no rule has.
  if (issue.rule === undefined) return `${issue.field}: ${issue.problem}`
  const rule = issue.rule.startsWith('#') ? `rule ${issue.rule}` : `rule "${issue.rule}"`
  return `${rule}: ${issue.field}: ${issue.problem}`
}

/** Collects the problems of one rule under its label. */
export type IssueSink = (field: string, problem: string) => void

/** The known name closest to a misspelt one, if any is close enough to be a likely typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const squash = (text: string) => text.toLowerCase().replace(/[_-]/g, '')
  const wanted = squash(name)
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(wanted.length / 3)) + 1
  for (const candidate of known) {
    const distance = editDistance(wanted, squash(candidate))
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution)
    }
    previous = current
  }
  return previous[b.length]!
}
