import type { Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import type { ClockReader } from './decide.js'
import type { Limiter } from './types.js'

// Where `createLimiter` leaves what the operator's calls need, keyed by the limiter: the calls
// themselves (operator.ts) are bundled only by apps that import `limiterOperations`.

/** What the operator's calls need of a limiter: its store, its rules, its clock. */
export type OperatorParts = {
  readonly store: Store
  readonly ruleOf: (id: string) => CompiledRule
  readonly reader: ClockReader
}

const parts = new WeakMap<Limiter, OperatorParts>()

export function registerOperatorParts(limiter: Limiter, given: OperatorParts): void {
  parts.set(limiter, given)
}

export function operatorPartsOf(limiter: Limiter): OperatorParts | undefined {
  return parts.get(limiter)
}
