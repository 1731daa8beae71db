import type { OperatorParts } from './operator.js'
import type { Limiter } from './types.js'

// Where `createLimiter` leaves what the operator's calls need, keyed by the limiter: the calls
// themselves (operator.ts) are bundled only by apps that import `limiterOperations`.

const parts = new WeakMap<Limiter, OperatorParts>()

export function registerOperatorParts(limiter: Limiter, given: OperatorParts): void {
  parts.set(limiter, given)
}

export function operatorPartsOf(limiter: Limiter): OperatorParts | undefined {
  return parts.get(limiter)
}
