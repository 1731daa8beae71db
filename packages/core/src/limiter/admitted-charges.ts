import type { Charge } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import type { Verdict } from './types.js'

/**
 * The charges a verdict's admitted decisions made in the store, to give back: its concurrency
 * slots only (`slots`, when the response ends), or everything but them (a refund of the
 * request's counts, which leaves the slots to the release). Decisions that charged nothing, or
 * whose store failed, gave the store nothing to give back.
 */
export function admittedCharges(
  verdict: Verdict,
  ruleOf: (id: string) => CompiledRule | undefined,
  slots: boolean,
): Charge[] {
  const charges: Charge[] = []
  for (const d of verdict.decisions) {
    if (!d.allowed || d.cost === 0 || d.key === undefined || d.storeFailed === true) continue
    const rule = ruleOf(d.rule)
    if (rule === undefined || (rule.algorithm.name === 'concurrency') !== slots) continue
    charges.push(chargeOf(rule, d.key, d.cost))
  }
  return charges
}

/**
 * The charge of `cost` to `key` under `rule`, as the store receives it, with the rule's penalty
 * (undefined for most rules: one shape for every charge; only `consumePenalised` reads it).
 */
export function chargeOf(rule: CompiledRule, key: string, cost: number): Charge {
  return {
    rule: rule.id,
    algorithm: rule.algorithm,
    key,
    cost,
    shadow: rule.shadow,
    penalty: rule.penalty,
  }
}
