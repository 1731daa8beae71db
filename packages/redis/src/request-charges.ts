import { type Charge, RateLimitError } from '@tollgate/core/store'
import type { PreparedCharge } from './prepare.js'

// What the store reads from a request's charges before it chooses a script for them.

/**
 * A charge that, with the charges before it on the same key, exceeds the rule's limit can never
 * pass: it is sent with cost -1, which the script denies (the core's `applyCharges` does the
 * same), so that no script decides a cost beyond a limit.
 */
export function markNeverPassing(
  charges: readonly Charge[],
  prepared: readonly PreparedCharge[],
): readonly PreparedCharge[] {
  if (charges.length < 2) return prepared
  let marked: PreparedCharge[] | undefined
  for (let i = 1; i < charges.length; i++) {
    let total = charges[i]!.cost
    for (let j = 0; j < i; j++) {
      if (prepared[j]!.place === prepared[i]!.place) total += charges[j]!.cost
    }
    if (total <= charges[i]!.algorithm.limit) continue
    marked ??= [...prepared]
    const args = [...prepared[i]!.args]
    args[1] = '-1'
    marked[i] = { ...prepared[i]!, args }
  }
  return marked ?? prepared
}

/**
 * Refuses a request that charges one rule and key with two different algorithms, whose states
 * would share a Redis key, as the core's stores refuse it.
 */
export function checkOneAlgorithmPerKey(charges: readonly Charge[]): void {
  for (let i = 1; i < charges.length; i++) {
    for (let j = 0; j < i; j++) {
      const [a, b] = [charges[i]!, charges[j]!]
      if (a.rule !== b.rule || a.key !== b.key || a.algorithm === b.algorithm) continue
      if (sameParams(a, b)) continue
      throw new RateLimitError(
        'ERR_RL_INVALID_RULE',
        `rule ${a.rule} is charged with two different algorithms for one key in one request`,
        { rule: a.rule, field: 'algorithm' },
      )
    }
  }
}

/** Two algorithm objects that decide alike (one rule's algorithm built twice). */
function sameParams(a: Charge, b: Charge): boolean {
  return (
    a.algorithm.name === b.algorithm.name &&
    JSON.stringify(a.algorithm.params) === JSON.stringify(b.algorithm.params)
  )
}

/**
 * The keys a rule-set script is sent, by charge index (RuleSetScripts.sent): the identity's once
 * for all the rules its value holds. A loop, not `map`: no closure per request.
 */
export function keysSent(keys: readonly string[], sent: readonly number[]): string[] {
  const out = new Array<string>(sent.length)
  for (let i = 0; i < sent.length; i++) out[i] = keys[sent[i]!]!
  return out
}

/** Every charge keys on the same identity, so their Redis keys share a hash tag and a slot. */
export function oneIdentity(charges: readonly Charge[]): boolean {
  for (let i = 1; i < charges.length; i++) if (charges[i]!.key !== charges[0]!.key) return false
  return true
}

/** No key appears twice (a request that charges one key twice needs the general script). */
export function distinct(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) {
    for (let j = 0; j < i; j++) if (keys[i] === keys[j]) return false
  }
  return true
}

/** No rule appears twice (in a request on one identity: no state is charged twice). */
export function distinctRules(charges: readonly Charge[]): boolean {
  for (let i = 1; i < charges.length; i++) {
    for (let j = 0; j < i; j++) if (charges[i]!.rule === charges[j]!.rule) return false
  }
  return true
}

/** [0, 1, …, count − 1], shared for the usual small counts (never mutated). */
const SMALL_INDICES: readonly (readonly number[])[] = Array.from({ length: 8 }, (_, count) =>
  Array.from({ length: count }, (_, i) => i),
)

export function everyIndex(count: number): readonly number[] {
  return SMALL_INDICES[count] ?? Array.from({ length: count }, (_, i) => i)
}
