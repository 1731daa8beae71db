import type { reservable } from '../algorithms/reservable.js'
import type { AlgorithmTable } from '../algorithms/table.js'
import type { Algorithm } from '../algorithms/types.js'
import type { Rule, RuleMode } from '../rules/types.js'
import { algorithmOf } from '../rules/validate-rule.js'
import type { Penalty } from '../store/types.js'
import type { RuleCosts } from './costs.js'
import type { RouteMatching } from './route-matching.js'
import type { RouteTarget } from './route-target.js'

/** A rule with everything the hot path needs precomputed once. */
export type CompiledRule = {
  /** Position in the rule set: decisions are reported in this order. */
  readonly index: number
  readonly id: string
  readonly rule: Rule
  readonly algorithm: Algorithm
  readonly mode: RuleMode
  readonly shadow: boolean
  /** Denied when the store fails (`onStoreError: 'closed'`), unless the rule only shadows. */
  readonly failClosed: boolean
  /** Decided in this process while the store fails (`onStoreError: 'fallback'`). */
  readonly fallback: boolean
  readonly denyMissingIdentity: boolean
  readonly plans: readonly string[] | undefined
  /**
   * The methods of `match.method`, with HEAD where it names GET (HEAD runs GET handlers in every
   * framework we adapt); undefined: any method. Routes may narrow them (see `targets`).
   */
  readonly methods: readonly string[] | undefined
  /** The identity names the key is built from, in order. */
  readonly identity: readonly string[]
  /** `name:` for a rule keyed on one identity (the key is the prefix plus the value). */
  readonly keyPrefix: string
  /**
   * The last identity value seen and its key: consecutive requests of one client share it. One
   * object for every rule of a limiter keyed on the same identity, so a request's rules on one
   * client get the same key string (built once; the store compares it by reference).
   */
  readonly lastKey: { value: string; key: string }
  readonly cost: number
  /**
   * A request's cost by its route (`costByRoute`), and its estimate under a rule with `settle`;
   * undefined when every request costs `cost`.
   */
  readonly costs: RuleCosts | undefined
  /** The routes of `match.route`, compiled by route matching; undefined when it names none. */
  readonly targets: readonly RouteTarget[] | undefined
  /** Set on a rule whose charges are settled: how long after its reservation, in ms. */
  readonly settleWithinMs: number | undefined
  /** Set on a rule that penalises denials: the penalty as the store applies it. */
  readonly penalty: Penalty | undefined
}

/** The limiter's parts a rule is compiled with (a `LimiterParts` is one). */
export type CompileParts = {
  readonly routes: RouteMatching
  readonly reservations?:
    | {
        readonly reservable: typeof reservable
        /** A settling rule's costs: a request's estimate, else its cost by route. */
        readonly costs: (
          rule: { readonly id: string; readonly algorithm: Algorithm },
          byRoute: RuleCosts | undefined,
        ) => RuleCosts
      }
    | undefined
  readonly penalties?: { readonly compile: (rule: Rule) => Penalty | undefined } | undefined
}

/**
 * A rule set compiled for the hot path; `parts.routes` compiles routes and costs by route. The
 * rules keyed on one identity share one key cache (`lastKey`).
 */
export function compiledRules(
  rules: readonly Rule[],
  algorithms: AlgorithmTable,
  parts: CompileParts,
): CompiledRule[] {
  const { routes, reservations, penalties } = parts
  const keyCaches = new Map<string, CompiledRule['lastKey']>()
  return rules.map((rule, index) => {
    // A rule whose charges are settled keeps its keys wide: a debt does not fit 8 bytes. (Without
    // the reservations part, such a rule is refused once compiled: see checkRuleParts.)
    const algorithmBuilt = algorithmOf(rule, algorithms)
    const settles = rule.settle !== undefined && reservations !== undefined
    const built = settles ? reservations.reservable(algorithmBuilt) : algorithmBuilt
    // A rule that declares a version carries it, for a store that keeps it beside each state.
    const algorithm =
      rule.version === undefined
        ? built
        : { ...built, versioned: { version: rule.version, onChange: rule.onChange } }
    const byRoute =
      Object.keys(rule.costByRoute).length === 0 ? undefined : routes.compileCosts(rule)
    const methods = rule.match.method
    const keyPrefix = `${rule.match.identity[0]}:`
    const lastKey = keyCaches.get(keyPrefix) ?? { value: '', key: '' }
    keyCaches.set(keyPrefix, lastKey)
    const shadow = rule.mode === 'shadow'
    return {
      index,
      id: rule.id,
      rule,
      algorithm,
      mode: rule.mode,
      shadow,
      failClosed: rule.onStoreError === 'closed' && !shadow,
      fallback: rule.onStoreError === 'fallback',
      denyMissingIdentity: rule.onMissingIdentity === 'deny',
      plans: rule.match.plan,
      methods: methods?.includes('GET') ? [...methods, 'HEAD'] : methods,
      identity: rule.match.identity,
      keyPrefix,
      lastKey,
      cost: rule.cost,
      // A settling rule's estimate, read through its costs: no test of it on other rules' path.
      costs: settles ? reservations.costs({ id: rule.id, algorithm }, byRoute) : byRoute,
      targets: rule.match.route && routes.targets(rule),
      settleWithinMs: rule.settle,
      // Compiled by the penalties part: a limiter without it refuses a penalty (see checkRuleParts).
      penalty: penalties?.compile(rule),
    }
  })
}
