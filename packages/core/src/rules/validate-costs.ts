import type { IssueSink } from './issues.js'
import type { RouteParser } from './route.js'
import { isRecord, typeName } from './validate-match.js'

type Names = { readonly cost?: unknown; readonly costByRoute?: unknown }
type Costs = { readonly cost: number; readonly costByRoute: Readonly<Record<string, number>> }

/**
 * Validates the default cost and the costs by route (`fields`, spelt as `labels` says). A cost
 * above the rule's capacity (its burst or limit) could never pass, so it is refused here rather
 * than on the first such request. `capacity` is undefined when the rule's parameters are
 * themselves invalid.
 */
export function validateCosts(
  fields: Names,
  labels: { readonly [K in keyof Names]-?: string },
  capacity: number | undefined,
  issue: IssueSink,
  parseRoute: RouteParser,
): Costs | undefined {
  let ok = true
  const fail: IssueSink = (field, problem) => {
    ok = false
    issue(field, problem)
  }
  const check = (value: unknown, field: string) => {
    const problem = costProblem(value, capacity)
    if (problem !== undefined) fail(field, problem)
    return value as number
  }
  const { cost = 1, costByRoute: byRoute = {} } = fields
  const label = labels.costByRoute
  const costByRoute: Record<string, number> = {}
  const defaultCost = check(cost, labels.cost)
  if (!isRecord(byRoute))
    fail(label, `expected an object of route → cost, got ${typeName(byRoute)}`)
  else {
    for (const [route, value] of Object.entries(byRoute)) {
      const field = `${label}[${JSON.stringify(route)}]`
      const parsed = parseRoute(route)
      // Routes are matched ignoring case, so `/v1/Export` and `/v1/export` are one route.
      const text = typeof parsed === 'string' ? undefined : parsed.text
      const first = Object.keys(costByRoute).find(
        (seen) => seen.toLowerCase() === text?.toLowerCase(),
      )
      if (text === undefined) fail(field, parsed as string)
      else if (first !== undefined)
        fail(field, `the same route as ${JSON.stringify(first)}, given twice`)
      else costByRoute[text] = check(value, field)
    }
  }
  return ok ? { cost: defaultCost, costByRoute } : undefined
}

/** What is wrong with a cost (a whole number ≥ 0, at most `capacity`), or undefined. */
export function costProblem(value: unknown, capacity: number | undefined): string | undefined {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    return `expected a whole number ≥ 0, got ${typeName(value)}`
  }
  if (capacity !== undefined && value > capacity) {
    return `a cost of ${value} exceeds the rule's capacity of ${capacity}: such a request could never pass`
  }
  return undefined
}
