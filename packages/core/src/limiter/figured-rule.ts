import type { AlgorithmTable } from '../algorithms/table.js'
import { checkRules } from '../rules/define-rules.js'
import { RuleValidationError } from '../rules/issues.js'
import type { RuleConfig } from '../rules/types.js'
import { ROUTES } from '../rules/validate-routes.js'
import { algorithmOf } from '../rules/validate-rule.js'
import { sameRule } from '../store/rule-tables.js'
import type { CompiledRule } from './compile-rule.js'
import { unfigurable } from './figures-option.js'
import { shown } from './verdict.js'

/*
 * A client's figures made into the rule it is decided under: validated exactly as the rule's
 * own fields are (the rule rebuilt with them goes through the rule validation), and compiled
 * once per distinct set of figures.
 */

const RATE_FIGURES = ['rate', 'period', 'burst'] as const
const WINDOW_FIGURES = ['limit', 'window'] as const
/** The rule rebuilt with figures names no route (a figure is never one). */
/** Distinct sets of figures remembered per rule; past it the memory starts over. */
const REMEMBERED = 1000

/** `rule` under `figures` (itself for none, or for its own), or the problem with them. */
export type FiguredRules = (rule: CompiledRule, figures: unknown) => CompiledRule | string

/** Compiles figures with `algorithms`, remembering each distinct set per rule. */
export function figuredRules(algorithms: AlgorithmTable): FiguredRules {
  const made = new WeakMap<CompiledRule, Map<string, CompiledRule | string>>()
  return (rule, figures) => {
    if (figures === undefined || figures === null) return rule
    const unfit = unfigurable(rule)
    if (unfit !== undefined) return `the rule ${unfit}`
    if (typeof figures !== 'object' || Array.isArray(figures)) {
      return `expected an object of figures or undefined, got ${shown(figures)}`
    }
    const names = figureNames(rule)
    const given = figures as Record<string, unknown>
    const extra = Object.keys(given).find(
      (name) => given[name] !== undefined && !(names as readonly string[]).includes(name),
    )
    if (extra !== undefined) {
      return `"${extra}" is not a figure of a ${rule.algorithm.name} rule (its figures: ${names.join(', ')})`
    }
    const signature = names.map((name) => `${typeof given[name]}:${String(given[name])}`).join('|')
    let memo = made.get(rule)
    if (memo === undefined) {
      memo = new Map()
      made.set(rule, memo)
    }
    let figured = memo.get(signature)
    if (figured === undefined) {
      if (memo.size >= REMEMBERED) memo.clear()
      figured = compileFigured(rule, given, names, algorithms)
      memo.set(signature, figured)
    }
    return figured
  }
}

function figureNames(rule: CompiledRule): readonly string[] {
  return 'burst' in rule.rule ? RATE_FIGURES : WINDOW_FIGURES
}

function compileFigured(
  rule: CompiledRule,
  given: Record<string, unknown>,
  names: readonly string[],
  algorithms: AlgorithmTable,
): CompiledRule | string {
  const config: Record<string, unknown> = { ...ownFigures(rule), cost: greatestCost(rule) }
  for (const name of names) if (given[name] !== undefined) config[name] = given[name]
  let algorithm: CompiledRule['algorithm']
  try {
    const [validated] = checkRules([config as RuleConfig], algorithms, { routes: ROUTES })
    algorithm = algorithmOf(validated!, algorithms)
  } catch (error) {
    if (!(error instanceof RuleValidationError)) throw error
    return error.issues.map((issue) => `${issue.field}: ${issue.problem}`).join('; ')
  }
  if (sameRule(algorithm, rule.algorithm)) return rule
  return { ...rule, algorithm }
}

/** The rule's own figures in code shape (durations with their unit), to be overridden. */
function ownFigures({ rule }: CompiledRule): Record<string, unknown> {
  const base = { id: rule.id, match: { identity: rule.match.identity }, algorithm: rule.algorithm }
  if ('burst' in rule) {
    return { ...base, rate: rule.rate, period: `${rule.period}ms`, burst: rule.burst }
  }
  if (!('window' in rule)) return base
  const { limit, window, timeZone, buckets } = rule
  return {
    ...base,
    limit,
    window: typeof window === 'number' ? `${window}ms` : window,
    ...(timeZone === undefined ? {} : { timeZone }),
    ...(buckets === undefined ? {} : { buckets }),
  }
}

/** What a request can cost under the rule: a client's capacity below it is refused. */
function greatestCost({ rule }: CompiledRule): number {
  return Math.max(rule.cost, ...Object.values(rule.costByRoute))
}
