import type { IssueSink } from './issues.js'
import type { RouteParser } from './route.js'
import { isRecord, typeName } from './validate-match.js'

type Labels = { readonly cost: string; readonly costByRoute: string }
type Costs = { readonly cost: number; readonly costByRoute: Readonly<Record<string, number>> }

/**
 * Validates the default cost and the costs by route. A cost above the rule's capacity (its burst
 * or limit) could never pass, so it is refused here rather than on the first such request.
 * `capacity` is undefined when the rule's parameters are themselves invalid.
 */
export function validateCosts(
  cost: unknown,
  byRoute: unknown,
  labels: Labels,
  capacity: number | undefined,
  issue: IssueSink,
  parseRoute: RouteParser,
): Costs | undefined {
  let ok = true
  const check = (value: unknown, field: string): number => {
    const problem = costProblem(value, capacity)
    if (problem === undefined) return value as number
    ok = false
    issue(field, problem)
    return 0
  }
  const defaultCost = cost === undefined ? 1 : check(cost, labels.cost)
  const costByRoute: Record<string, number> = {}
  if (byRoute !== undefined && !isRecord(byRoute)) {
    ok = false
    issue(labels.costByRoute, `expected an object of route → cost, got ${typeName(byRoute)}`)
  } else if (byRoute !== undefined) {
    // Routes are matched ignoring case, so `/v1/Export` and `/v1/export` are one route.
    const seen = new Map<string, string>()
    for (const [route, value] of Object.entries(byRoute)) {
      const field = `${labels.costByRoute}[${JSON.stringify(route)}]`
      const parsed = parseRoute(route)
      if (typeof parsed === 'string') {
        ok = false
        issue(field, parsed)
        continue
      }
      const first = seen.get(parsed.text.toLowerCase())
      if (first !== undefined) {
        ok = false
        issue(field, `the same route as ${JSON.stringify(first)}, given twice`)
      } else {
        seen.set(parsed.text.toLowerCase(), parsed.text)
        costByRoute[parsed.text] = check(value, field)
      }
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
