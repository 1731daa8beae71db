import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { checkRules } from '../rules/define-rules.js'
import { HTTP_METHODS } from '../rules/route.js'
import type { Rule, RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { CompiledRule } from './compile-rule.js'
import { compiledRules } from './compile-rule.js'
import type { CostTable } from './costs.js'
import { composeLimiter, type LimiterParts } from './create-limiter.js'
import { clockReader } from './decide.js'
import { NO_ROUTES } from './no-routes.js'
import {
  exactPath,
  matchesAny,
  matchPath,
  normalizePath,
  type PathPattern,
} from './path-pattern.js'
import { type RouteMatching, routeMatching } from './route-matching.js'
import { coversMethod, type RouteTarget } from './route-target.js'
import type { RequestFacts, Verdict } from './types.js'

// The rules a request matches, and the cost each charges, found by the limiter (a scan of the
// rules without route matching, route matching's index with it) and by the per-method index
// every limiter used before (copied below, as it was), over generated rule sets and requests.

// --- The matcher as it was: every limiter indexed its rules by method, then by exact path. ---

type OldTarget = RouteTarget
type OldCandidates = {
  readonly rules: readonly CompiledRule[]
  readonly patterns: readonly (readonly PathPattern[] | null)[]
}
type OldEntry = { readonly rule: CompiledRule; readonly patterns: readonly PathPattern[] | null }
type OldBucket = {
  readonly method: string | undefined
  readonly byPath: ReadonlyMap<string, OldCandidates>
  readonly other: OldCandidates
}

function oldTargetsOf(rule: Rule, routes: RouteMatching): OldTarget[] {
  if (rule.match.route !== undefined) return routes.targets(rule)
  const methods: readonly (string | undefined)[] = rule.match.method ?? [undefined]
  return methods.map((method) => ({ method, pattern: undefined }))
}

function oldCandidates(entries: readonly OldEntry[]): OldCandidates {
  return {
    rules: entries.map((entry) => entry.rule),
    patterns: entries.map((entry) => entry.patterns),
  }
}

function oldPathIndex(entries: OldEntry[]) {
  const everywhere: OldEntry[] = []
  const exactRules = new Map<string, CompiledRule[]>()
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
  const inRuleOrder = (list: OldEntry[]) =>
    oldCandidates(list.sort((a, b) => a.rule.index - b.rule.index))
  const byPath = new Map<string, OldCandidates>()
  for (const [path, exact] of exactRules) {
    const pathEntries = everywhere.filter((entry) => !exact.includes(entry.rule))
    for (const rule of new Set(exact)) pathEntries.push({ rule, patterns: null })
    byPath.set(path, inRuleOrder(pathEntries))
  }
  return { byPath, other: inRuleOrder(everywhere) }
}

/** `routed` says whether the limiter had route matching (its `pathIndex`). */
function oldIndex(rules: readonly CompiledRule[], routes: RouteMatching, routed: boolean) {
  const targetsOf = new Map(rules.map((rule) => [rule, oldTargetsOf(rule.rule, routes)]))
  const methods = new Set<string>()
  let normalizes = false
  for (const rule of rules) {
    for (const target of targetsOf.get(rule)!) {
      if (target.method !== undefined) methods.add(target.method)
      if (target.pattern !== undefined) normalizes = true
    }
    // The rules here do not settle: their costs are by route alone.
    const costs = rule.costs as CostTable | undefined
    if (costs !== undefined) {
      normalizes = true
      for (const method of costs.byMethod.keys()) methods.add(method)
    }
  }
  if (methods.has('GET')) methods.add('HEAD')
  const bucketFor = (method: string | undefined): OldBucket => {
    const entries: OldEntry[] = []
    for (const rule of rules) {
      const targets = targetsOf.get(rule)!.filter((target) => coversMethod(target.method, method))
      if (targets.length === 0) continue
      const anyPath = targets.some((target) => target.pattern === undefined)
      entries.push({ rule, patterns: anyPath ? null : targets.map((target) => target.pattern!) })
    }
    const paths = routed
      ? oldPathIndex(entries)
      : { byPath: new Map(), other: oldCandidates(entries) }
    return { method, ...paths }
  }
  const buckets = new Map<string, OldBucket>()
  for (const method of methods) buckets.set(method, bucketFor(method))
  const unnamed = bucketFor(undefined)
  for (const method of HTTP_METHODS) if (!buckets.has(method)) buckets.set(method, unnamed)
  const lookup = (method: string): OldBucket => {
    const bucket = buckets.get(method)
    if (bucket !== undefined) return bucket
    const upper = method.toUpperCase()
    return upper === method ? unnamed : (buckets.get(upper) ?? unnamed)
  }
  return { buckets, lookup, normalizes }
}

function oldCostOf(table: CostTable, method: string | undefined, path: string, fallback: number) {
  const costs = (method === undefined ? undefined : table.byMethod.get(method)) ?? table.anyMethod
  const exact = costs.exact.get(path)
  if (exact !== undefined) return exact
  for (const { pattern, cost } of costs.patterns) if (matchPath(pattern, path)) return cost
  return fallback
}

/** The old decider's matching loop: the ids of the rules a request matches, with their costs. */
function oldMatch(
  index: ReturnType<typeof oldIndex>,
  facts: RequestFacts,
  routed: boolean,
): [string, number][] {
  const path = index.normalizes && routed ? normalizePath(facts.path) : facts.path
  const bucket = index.buckets.get(facts.method) ?? index.lookup(facts.method)
  const candidates = bucket.byPath.get(path) ?? bucket.other
  const matched: [string, number][] = []
  candidates.rules.forEach((rule, i) => {
    const plans = rule.plans
    if (plans !== undefined && (facts.plan === undefined || !plans.includes(facts.plan))) return
    const patterns = candidates.patterns[i]!
    if (patterns !== null && !matchesAny(patterns, path)) return
    const costs = rule.costs as CostTable | undefined
    const cost = costs === undefined ? rule.cost : oldCostOf(costs, bucket.method, path, rule.cost)
    matched.push([rule.id, cost])
  })
  return matched
}

// --- Generated rule sets and requests. ---

const METHOD_NAMES = ['GET', 'get', 'HEAD', 'head', 'POST', 'Post', 'PUT', 'DELETE', 'PATCH']
const ROUTES = [
  '/a',
  '/A/b',
  '/a/:id',
  '/b/*',
  '*',
  'GET /a',
  'GET *',
  'HEAD /a/:id',
  'POST /b',
  'POST /a',
  'get /b/*',
  'DELETE /a/b',
]
const PLANS = ['free', 'pro']
const REQUEST_METHODS = [
  ...METHOD_NAMES,
  'GeT',
  'hEAD',
  'delete',
  'OPTIONS',
  'options',
  'QUERY',
  'FOO',
  'foo',
  'M-SEARCH',
  'poſt',
  'POſT',
  'ſ',
  '',
]
const PATHS = ['/', '/a', '/a/', '/A', '/a/1', '/a/b', '/A/B/', '/b', '/b/x/y', '/c', '/a?x=1']

const someOf = <T>(items: readonly T[]) =>
  fc.option(fc.uniqueArray(fc.constantFrom(...items), { minLength: 1, maxLength: 3 }), {
    nil: undefined,
  })

const costByRoute = fc.option(
  fc.dictionary(fc.constantFrom(...ROUTES), fc.integer({ min: 2, max: 9 }), { maxKeys: 3 }),
  { nil: undefined },
)

/** A rule's match and costs, `routed`: whether it may name routes. */
const ruleShape = (routed: boolean) =>
  fc.record({
    method: someOf(METHOD_NAMES),
    plan: someOf(PLANS),
    route: routed ? someOf(ROUTES) : fc.constant(undefined),
    costByRoute: routed ? costByRoute : fc.constant(undefined),
  })

/** The routes whose own method `match.method` names (others are refused), or undefined if none. */
function agreeing(routes: string[], methods: string[] | undefined): string[] | undefined {
  const upper = methods?.map((method) => method.toUpperCase())
  const kept = routes.filter((route) => {
    const [method, path] = route.split(' ')
    return path === undefined || upper === undefined || upper.includes(method!.toUpperCase())
  })
  return kept.length > 0 ? kept : undefined
}

const ruleSet = (routed: boolean): fc.Arbitrary<RuleConfig[]> =>
  fc.array(ruleShape(routed), { minLength: 1, maxLength: 5 }).map((shapes) =>
    shapes.map(
      ({ method, plan, route, costByRoute }, i) =>
        ({
          id: `r${i}`,
          match: { identity: 'ip', method, plan, route: route && agreeing(route, method) },
          algorithm: 'fixed_window',
          limit: 1_000_000,
          window: '1m',
          ...(costByRoute === undefined ? {} : { costByRoute }),
        }) as RuleConfig,
    ),
  )

const request = fc.record({
  method: fc.constantFrom(...REQUEST_METHODS),
  path: fc.constantFrom(...PATHS),
  plan: fc.constantFrom(undefined, 'free', 'pro', 'other'),
})

const partsOf = (routes: RouteMatching): LimiterParts => ({
  algorithms: BUILT_IN_ALGORITHMS,
  routes,
  store: memoryStore,
  penalties: undefined,
  clock: clockReader,
})

/** The rules a request matches by the old matcher and by the limiter, or undefined if refused. */
function compare(rules: RuleConfig[], requests: RequestFacts[], routes: RouteMatching) {
  const parts = partsOf(routes)
  let checked: readonly Rule[]
  try {
    // Routes that contradict match.method, and the like, are refused: not a matching question.
    checked = checkRules(rules, BUILT_IN_ALGORITHMS, parts)
  } catch {
    return undefined
  }
  const routed = routes === routeMatching
  const old = oldIndex(compiledRules(checked, BUILT_IN_ALGORITHMS, parts), routes, routed)
  const limiter = composeLimiter({ rules }, parts)
  return requests.map((facts) => {
    const verdict = limiter.decide(facts, { now: 0 }) as Verdict
    return {
      facts,
      expected: oldMatch(old, facts, routed),
      actual: verdict.decisions.map((d) => [d.rule, d.cost]),
    }
  })
}

const requests = fc.array(
  request.map((r) => ({ ...r, identities: { ip: '192.0.2.1' } }) as RequestFacts),
  { minLength: 1, maxLength: 20 },
)

describe('rule matching, old per-method index against the scan and route index', () => {
  it('matches the same rules, in order, without route matching (the scan)', () => {
    let compared = 0
    fc.assert(
      fc.property(ruleSet(false), requests, (rules, facts) => {
        const results = compare(rules, facts, NO_ROUTES)
        expect(results).toBeDefined()
        for (const { facts, expected, actual } of results!) {
          compared++
          expect(actual, JSON.stringify({ rules, facts })).toEqual(expected)
        }
      }),
      { numRuns: 400 },
    )
    expect(compared).toBeGreaterThan(400)
  })

  it('matches the same rules, in order, at the same costs, with route matching', () => {
    let compared = 0
    fc.assert(
      fc.property(ruleSet(true), requests, (rules, facts) => {
        for (const { facts: one, expected, actual } of compare(rules, facts, routeMatching) ?? []) {
          compared++
          expect(actual, JSON.stringify({ rules, one })).toEqual(expected)
        }
      }),
      { numRuns: 600 },
    )
    // Most generated rule sets are valid: the comparison is not vacuous.
    expect(compared).toBeGreaterThan(2000)
  })

  it('matches the same rules with route matching composed but no rule naming a route', () => {
    fc.assert(
      fc.property(ruleSet(false), requests, (rules, facts) => {
        for (const { facts: one, expected, actual } of compare(rules, facts, routeMatching)!) {
          expect(actual, JSON.stringify({ rules, one })).toEqual(expected)
        }
      }),
      { numRuns: 200 },
    )
  })
})
