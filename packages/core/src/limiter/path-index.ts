import type { CompiledRule } from './compile-rule.js'
import { exactPath, matchesAny, normalizePath, type PathPattern } from './path-pattern.js'
import { coversMethod, type RouteTarget } from './route-target.js'
import type { Candidates, MethodCandidates, RuleIndex } from './rule-index.js'

// Route matching's rule index: a limiter composed without it scans its rules (`ruleScan`), and
// bundles none of this.

/** A rule that may match a request of one method, with its patterns (undefined: any path). */
type IndexEntry = {
  readonly rule: CompiledRule
  readonly patterns: readonly PathPattern[] | undefined
}

/**
 * Rules indexed once at start-up by method, then by exact path, so that a request costs two map
 * lookups plus the pattern tests of the rules whose routes have parameters or `*`.
 */
export function routeIndex(rules: readonly CompiledRule[]): RuleIndex {
  const methods = new Set<string>()
  // Whether any rule names a route or a cost by route: only then is the path normalized.
  let routed = false
  const targetsOf = rules.map((rule) => {
    // A rule without routes applies on every path, to the methods of `match.method`.
    const targets: readonly RouteTarget[] =
      rule.targets ??
      (rule.rule.match.method ?? [undefined]).map((method) => ({ method, pattern: undefined }))
    for (const target of targets) {
      if (target.method !== undefined) methods.add(target.method)
      if (target.pattern !== undefined) routed = true
    }
    if (Object.keys(rule.rule.costByRoute).length > 0) routed = true
    return targets
  })
  if (methods.has('GET')) methods.add('HEAD')
  const candidatesFor = (method: string | undefined): MethodCandidates => {
    const entries: IndexEntry[] = []
    rules.forEach((rule, i) => {
      const targets = targetsOf[i]!.filter((target) => coversMethod(target.method, method))
      if (targets.length === 0) return
      const anyPath = targets.some((target) => target.pattern === undefined)
      entries.push({
        rule,
        patterns: anyPath ? undefined : targets.map((target) => target.pattern!),
      })
    })
    return pathIndex(entries)
  }
  const byMethod = new Map<string, MethodCandidates>()
  for (const method of methods) byMethod.set(method, candidatesFor(method))
  // For the methods no rule names (costs by route need none of their own: they are looked up by method).
  const unnamed = candidatesFor(undefined)
  return {
    normalizePath: routed ? normalizePath : undefined,
    byMethod,
    unnamed,
    readsMethod: true,
    matchesAny,
  }
}

/** Entries as candidates, in the order given. */
function candidates(entries: readonly IndexEntry[]): Candidates {
  return {
    rules: entries.map((entry) => entry.rule),
    patterns: entries.map((entry) => entry.patterns),
  }
}

/**
 * A method's entries (in rule order) by path: the rules with an all-literal route equal to a
 * path match it without a test (that path's candidates are those and the rules that may match
 * elsewhere); the rest keep their other patterns, tested on every path. Candidates stay in rule
 * order.
 */
function pathIndex(entries: readonly IndexEntry[]): MethodCandidates {
  const everywhere: IndexEntry[] = []
  const exactRules = new Map<string, CompiledRule[]>()
  for (const { rule, patterns: given } of entries) {
    if (given === undefined) {
      everywhere.push({ rule, patterns: undefined })
      continue
    }
    const patterns: PathPattern[] = []
    for (const pattern of given) {
      const path = exactPath(pattern)
      if (path === undefined) patterns.push(pattern)
      else exactRules.set(path, [...(exactRules.get(path) ?? []), rule])
    }
    if (patterns.length > 0) everywhere.push({ rule, patterns })
  }
  const inRuleOrder = (list: IndexEntry[]) =>
    candidates(list.sort((a, b) => a.rule.index - b.rule.index))
  const byPath = new Map<string, Candidates>()
  for (const [path, exact] of exactRules) {
    const pathEntries = everywhere.filter((entry) => !exact.includes(entry.rule))
    for (const rule of new Set(exact)) pathEntries.push({ rule, patterns: undefined })
    byPath.set(path, inRuleOrder(pathEntries))
  }
  return { byPath, other: inRuleOrder(everywhere) }
}
