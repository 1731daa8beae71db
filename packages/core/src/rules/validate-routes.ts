import type { IssueSink } from './issues.js'
import { parseRoute, type RouteParser } from './route.js'

// The routes of rules as route matching reads them (`match.route`, `costByRoute`): reached only
// through it, so that a limiter composed without it bundles none of this.

/**
 * How the routes of rules are read while they are validated: route matching's (`ROUTES`), or,
 * for a limiter without it, one that refuses every route.
 */
export type RouteReader = {
  readonly parseRoute: RouteParser
  /** The problem with one route of `match.route`, whose `match.method` is `methods`. */
  readonly checkRoute: (route: string, methods: readonly string[] | undefined) => string | undefined
  /**
   * Reads `costByRoute`: its costs by route in normal form, each cost read by `check`; a
   * route's problem is reported as `fieldOf(route)`'s.
   */
  readonly readCosts: (
    byRoute: Readonly<Record<string, unknown>>,
    fieldOf: (route: string) => string,
    check: (value: unknown, field: string) => number,
    issue: IssueSink,
  ) => Record<string, number>
}

/** The problem with one route of `match.route`, whose `match.method` is `methods`. */
export function checkRoute(
  route: string,
  methods: readonly string[] | undefined,
): string | undefined {
  const parsed = parseRoute(route)
  if (typeof parsed === 'string') return parsed
  if (parsed.method !== undefined && methods !== undefined && !methods.includes(parsed.method)) {
    return `${JSON.stringify(route)} conflicts with match.method (${methods.join(', ')})`
  }
  return undefined
}

/** Reads `costByRoute` (see `RouteReader`). */
export const readCosts: RouteReader['readCosts'] = (byRoute, fieldOf, check, issue) => {
  const costs: Record<string, number> = {}
  for (const [route, value] of Object.entries(byRoute)) {
    const field = fieldOf(route)
    const parsed = parseRoute(route)
    if (typeof parsed === 'string') {
      issue(field, parsed)
      continue
    }
    // Routes are matched ignoring case, so `/v1/Export` and `/v1/export` are one route.
    const same = (seen: string) => seen.toLowerCase() === parsed.text.toLowerCase()
    const first = Object.keys(costs).find(same)
    if (first !== undefined) issue(field, `the same route as ${JSON.stringify(first)}, given twice`)
    else costs[parsed.text] = check(value, field)
  }
  return costs
}

/** Route matching's reader. */
export const ROUTES: RouteReader = { parseRoute, checkRoute, readCosts }
