import { shown, whole } from '../options/option-values.js'
import type { IssueSink } from './issues.js'
import { isRecord } from './validate-match.js'
import type { RouteReader } from './validate-routes.js'

type Names = { readonly cost?: unknown; readonly costByRoute?: unknown }
type Costs = { readonly cost: number; readonly costByRoute: Readonly<Record<string, number>> }

/**
 * Validates the default cost and the costs by route (`fields`, spelt as `labels` says), whose
 * routes `routes` reads. A cost above the rule's capacity (its burst or limit) could never pass,
 * so it is refused here rather than on the first such request. `capacity` is undefined when the
 * rule's parameters are themselves invalid. Its result is to be used only when nothing was
 * reported.
 */
export function validateCosts(
  fields: Names,
  labels: { readonly [K in keyof Names]-?: string },
  capacity: number | undefined,
  issue: IssueSink,
  routes: RouteReader,
): Costs {
  const check = (value: unknown, field: string) => {
    // A whole number ≥ 0, at most the capacity: a larger one could never pass.
    const problem = whole({ min: 0, max: capacity })(value)
    if (problem !== undefined) issue(field, problem)
    return value as number
  }
  const { cost = 1, costByRoute = {} } = fields
  const label = labels.costByRoute
  const fieldOf = (route: string) => `${label}[${shown(route)}]`
  // The default cost checked first; what is refused is left out (nothing is used then).
  return {
    cost: check(cost, labels.cost),
    costByRoute: isRecord(costByRoute)
      ? routes.readCosts(costByRoute, fieldOf, check, issue)
      : (issue(label, `expected { route: cost }, got ${shown(costByRoute)}`) as never),
  }
}
