import type { CompiledRule } from './compile-rule.js'
import type { PathPattern } from './path-pattern.js'

/**
 * The rules that may match a request, in rule order. `patterns[i]` is undefined when `rules[i]`
 * matches any path, else the patterns one of which the path must match. The decider checks each
 * rule's methods and plans.
 */
export type Candidates = {
  readonly rules: readonly CompiledRule[]
  readonly patterns: readonly (readonly PathPattern[] | undefined)[]
}

/** The candidates for the requests of one method. */
export type MethodCandidates = {
  /** By exact path (normalized); undefined when no rule's route names one. */
  readonly byPath?: ReadonlyMap<string, Candidates>
  /** For the paths `byPath` does not hold. */
  readonly other: Candidates
}

/**
 * How a limiter finds a request's candidate rules: built by its routes part (`ruleIndex`). Plain
 * data, so that the decider finds them without a call.
 */
export type RuleIndex = {
  /**
   * The path a request is matched on; undefined when no rule names a route or a cost by route:
   * the request's path is then never looked at, and not normalized.
   */
  readonly normalizePath?: (target: string) => string
  /** By upper-case method; undefined, or a method it does not hold: `unnamed`. */
  readonly byMethod?: ReadonlyMap<string, MethodCandidates>
  /** For the methods no rule names (for every method, without route matching). */
  readonly unnamed: MethodCandidates
  /**
   * True when the request's method is looked at (by `byMethod`, or a rule's methods): only then
   * is a method that is not upper case upper-cased.
   */
  readonly readsMethod: boolean
  /** True when `path` matches one of `patterns`: given when a candidate may have patterns. */
  readonly matchesAny?: (patterns: readonly PathPattern[], path: string) => boolean
}

/**
 * The index of a limiter without route matching: no rule has a route, so every rule is a
 * candidate on every path, and the decider's scan of their methods and plans is the whole match.
 */
export function ruleScan(rules: readonly CompiledRule[]): RuleIndex {
  const other: Candidates = { rules, patterns: [] }
  return { unnamed: { other }, readsMethod: rules.some((rule) => rule.methods !== undefined) }
}
