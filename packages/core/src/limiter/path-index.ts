import { exactPath, type PathPattern } from './path-pattern.js'

// How a method's rules are indexed by path. Only route matching's `pathIndex` looks at paths: a
// limiter composed without it has no rule with a route, and bundles none of it.

/**
 * The rules that may match a request, in rule order. `patterns[i]` is null when `rules[i]`
 * already matches the path (no route, or an exact route equal to it), else the patterns one of
 * which the path must match. Plans are checked by the caller.
 */
export type Candidates<R> = {
  readonly rules: readonly R[]
  readonly patterns: readonly (readonly PathPattern[] | null)[]
}

/** A rule that may match a request of one method, with its patterns (null: any path). */
export type IndexEntry<R> = { readonly rule: R; readonly patterns: readonly PathPattern[] | null }

/** A method's entries (in rule order) by path, and for the paths no rule names exactly. */
export type PathIndex = <R extends { readonly index: number }>(
  entries: IndexEntry<R>[],
) => { readonly byPath: ReadonlyMap<string, Candidates<R>>; readonly other: Candidates<R> }

/** Entries as candidates, in the order given. */
export function candidates<R>(entries: readonly IndexEntry<R>[]): Candidates<R> {
  return {
    rules: entries.map((entry) => entry.rule),
    patterns: entries.map((entry) => entry.patterns),
  }
}

/**
 * Route matching's index: the rules with an all-literal route equal to a path match it without a
 * test (that path's candidates are those and the rules that may match elsewhere); the rest keep
 * their other patterns, tested on every path. Candidates stay in rule order.
 */
export const pathIndex: PathIndex = (entries) => {
  type Entry = (typeof entries)[number]
  const everywhere: Entry[] = []
  const exactRules = new Map<string, Entry['rule'][]>()
  for (const { rule, patterns: given } of entries) {
    if (given === null) {
      everywhere.push({ rule, patterns: null })
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
  const inRuleOrder = (list: Entry[]) =>
    candidates(list.sort((a, b) => a.rule.index - b.rule.index))
  const byPath = new Map<string, Candidates<Entry['rule']>>()
  for (const [path, exact] of exactRules) {
    const pathEntries = everywhere.filter((entry) => !exact.includes(entry.rule))
    for (const rule of new Set(exact)) pathEntries.push({ rule, patterns: null })
    byPath.set(path, inRuleOrder(pathEntries))
  }
  return { byPath, other: inRuleOrder(everywhere) }
}
