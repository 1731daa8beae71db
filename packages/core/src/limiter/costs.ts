import { type ParsedRoute, parseRoute } from '../rules/route.js'
import { compilePattern, exactPath, matchPath, type PathPattern } from './path-pattern.js'
import { coversMethod } from './route-target.js'

type MethodCosts = {
  readonly exact: ReadonlyMap<string, number>
  readonly patterns: readonly { readonly pattern: PathPattern; readonly cost: number }[]
}

/**
 * What a request costs under a rule whose requests do not all cost its `cost`: `fallback` when
 * no route of the rule's names it; `estimate` is the request's (`DecideOptions.estimate`), read
 * by a rule with `settle` only.
 */
export type RuleCosts = {
  readonly costOf: (
    method: string,
    path: string,
    fallback: number,
    estimate: number | undefined,
  ) => number
}

/** A rule's costs by route, indexed by method, then exact path, then patterns in order. */
export type CostTable = {
  readonly byMethod: ReadonlyMap<string, MethodCosts>
  /** For methods no cost route names. */
  readonly anyMethod: MethodCosts
  /** `costOf` this table: here, so that the hot path reaches it only through a rule with costs. */
  readonly costOf: (method: string, path: string, fallback: number) => number
}

/**
 * Precedence: an exact path beats a pattern, a route naming the method beats one that does not,
 * and among patterns the first written wins.
 */
export function compileCosts(costByRoute: Readonly<Record<string, number>>): CostTable {
  const entries = Object.entries(costByRoute).map(([text, cost]) => {
    const route = parseRoute(text) as ParsedRoute
    return { method: route.method, pattern: compilePattern(route), cost }
  })
  const methods = new Set<string>()
  for (const { method } of entries) if (method !== undefined) methods.add(method)
  if (methods.has('GET')) methods.add('HEAD')
  const forMethod = (method: string | undefined): MethodCosts => {
    const covering = entries.filter((e) => coversMethod(e.method, method))
    // Specific methods first, so that they win both in the exact map and among patterns.
    covering.sort((a, b) => Number(a.method === undefined) - Number(b.method === undefined))
    const exact = new Map<string, number>()
    const patterns: { pattern: PathPattern; cost: number }[] = []
    for (const { pattern, cost } of covering) {
      const path = exactPath(pattern)
      if (path === undefined) patterns.push({ pattern, cost })
      else if (!exact.has(path)) exact.set(path, cost)
    }
    return { exact, patterns }
  }
  const byMethod = new Map<string, MethodCosts>()
  for (const method of methods) byMethod.set(method, forMethod(method))
  const table: CostTable = {
    byMethod,
    anyMethod: forMethod(undefined),
    costOf: (method, path, fallback) => costOf(table, method, path, fallback),
  }
  return table
}

/**
 * The cost of a request under a rule's table, or `fallback`. `method` is upper case; `path` is
 * normalised.
 */
function costOf(table: CostTable, method: string, path: string, fallback: number): number {
  const costs = table.byMethod.get(method) ?? table.anyMethod
  const exact = costs.exact.get(path)
  if (exact !== undefined) return exact
  const patterns = costs.patterns
  for (let i = 0; i < patterns.length; i++) {
    if (matchPath(patterns[i]!.pattern, path)) return patterns[i]!.cost
  }
  return fallback
}
