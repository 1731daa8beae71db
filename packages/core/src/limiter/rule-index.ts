import { HTTP_METHODS } from '../rules/route.js'
import type { CompiledRule } from './compile-rule.js'
import { costMethods } from './costs.js'
import { exactPath, type PathPattern } from './path-pattern.js'
import type { RouteMatching } from './route-matching.js'
import { coversMethod } from './route-target.js'

/**
 * The rules that may match a request, in rule order. `patterns[i]` is null when `rules[i]`
 * already matches the path (no route, or an exact route equal to it), else the patterns one of
 * which the path must match. Plans are checked by the caller.
 */
type Candidates = {
  readonly rules: readonly CompiledRule[]
  readonly patterns: readonly (readonly PathPattern[] | null)[]
}

type MethodBucket = {
  /** The method as the cost tables know it; undefined for methods that no rule names. */
  readonly method: string | undefined
  readonly byPath: ReadonlyMap<string, Candidates>
  /** For paths that no rule names exactly. */
  readonly other: Candidates
}

/**
 * Rules indexed once at start-up by method, then by exact path, so that a request costs two map
 * lookups plus the pattern tests of the rules whose routes have parameters or `*`.
 */
export type RuleIndex = {
  /** By upper-case method; a miss goes to `lookup`. */
  readonly buckets: ReadonlyMap<string, MethodBucket>
  lookup(method: string): MethodBucket
  /**
   * False when no rule names a route or a cost by route: the request's path is then never
   * looked at, and not normalized.
   */
  readonly routed: boolean
  /** The path a request is matched on. */
  readonly normalizePath: RouteMatching['normalizePath']
  readonly matchesAny: RouteMatching['matchesAny']
}

/** The index of compiled rules, whose routes `routes` matches. */
export function buildRuleIndex(rules: readonly CompiledRule[], routes: RouteMatching): RuleIndex {
  const methods = new Set<string>()
  for (const rule of rules) {
    for (const target of rule.targets) if (target.method !== undefined) methods.add(target.method)
    if (rule.costs !== undefined) for (const method of costMethods(rule.costs)) methods.add(method)
  }
  if (methods.has('GET')) methods.add('HEAD')
  const buckets = new Map<string, MethodBucket>()
  for (const method of methods) buckets.set(method, bucketFor(rules, method))
  const unnamed = bucketFor(rules, undefined)
  // Every common method resolves in one lookup, named by a rule or not.
  for (const method of HTTP_METHODS) if (!buckets.has(method)) buckets.set(method, unnamed)
  const routed = rules.some(
    (rule) =>
      rule.costs !== undefined || rule.targets.some((target) => target.pattern !== undefined),
  )
  return {
    buckets,
    routed,
    normalizePath: routes.normalizePath,
    matchesAny: routes.matchesAny,
    lookup(method) {
      const bucket = buckets.get(method)
      if (bucket !== undefined) return bucket
      // Adapters pass upper case; a lower-case method must not slip past the limits.
      const upper = method.toUpperCase()
      return upper === method ? unnamed : (buckets.get(upper) ?? unnamed)
    },
  }
}

function bucketFor(rules: readonly CompiledRule[], method: string | undefined): MethodBucket {
  type Entry = { rule: CompiledRule; patterns: PathPattern[] | null }
  const everywhere: Entry[] = []
  const exactRules = new Map<string, CompiledRule[]>()
  for (const rule of rules) {
    const targets = rule.targets.filter((target) => coversMethod(target.method, method))
    if (targets.length === 0) continue
    if (targets.some((target) => target.pattern === undefined)) {
      everywhere.push({ rule, patterns: null })
      continue
    }
    const patterns: PathPattern[] = []
    for (const { pattern } of targets) {
      const path = exactPath(pattern!)
      if (path === undefined) patterns.push(pattern!)
      else exactRules.set(path, [...(exactRules.get(path) ?? []), rule])
    }
    if (patterns.length > 0) everywhere.push({ rule, patterns })
  }
  const byPath = new Map<string, Candidates>()
  for (const [path, exact] of exactRules) {
    const entries = everywhere.filter((entry) => !exact.includes(entry.rule))
    for (const rule of new Set(exact)) entries.push({ rule, patterns: null })
    byPath.set(path, candidates(entries))
  }
  return { method, byPath, other: candidates(everywhere) }
}

function candidates(entries: { rule: CompiledRule; patterns: PathPattern[] | null }[]): Candidates {
  const sorted = [...entries].sort((a, b) => a.rule.index - b.rule.index)
  return {
    rules: sorted.map((entry) => entry.rule),
    patterns: sorted.map((entry) => entry.patterns),
  }
}
