import { HTTP_METHODS } from '../rules/route.js'
import type { CompiledRule } from './compile-rule.js'
import { candidates, type IndexEntry, type Candidates as PathCandidates } from './path-index.js'
import type { RouteMatching } from './route-matching.js'
import { coversMethod } from './route-target.js'

type Candidates = PathCandidates<CompiledRule>

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
  // Whether any rule names a route or a cost by route (`RuleIndex.routed`).
  let routed = false
  for (const rule of rules) {
    for (const target of rule.targets) {
      if (target.method !== undefined) methods.add(target.method)
      if (target.pattern !== undefined) routed = true
    }
    if (rule.costs !== undefined) {
      routed = true
      // The methods its cost table names (the table adds HEAD where it names GET).
      for (const method of rule.costs.byMethod.keys()) methods.add(method)
    }
  }
  if (methods.has('GET')) methods.add('HEAD')
  const bucketFor = (method: string | undefined): MethodBucket => {
    const entries: IndexEntry<CompiledRule>[] = []
    for (const rule of rules) {
      const targets = rule.targets.filter((target) => coversMethod(target.method, method))
      if (targets.length === 0) continue
      const anyPath = targets.some((target) => target.pattern === undefined)
      entries.push({ rule, patterns: anyPath ? null : targets.map((target) => target.pattern!) })
    }
    const paths = routes.pathIndex?.(entries) ?? { byPath: new Map(), other: candidates(entries) }
    return { method, ...paths }
  }
  const buckets = new Map<string, MethodBucket>()
  for (const method of methods) buckets.set(method, bucketFor(method))
  const unnamed = bucketFor(undefined)
  // Every common method resolves in one lookup, named by a rule or not.
  for (const method of HTTP_METHODS) if (!buckets.has(method)) buckets.set(method, unnamed)
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
