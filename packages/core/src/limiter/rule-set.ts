import type { AlgorithmTable } from '../algorithms/table.js'
import { invalidOption } from '../options/option-values.js'
import type { Rule } from '../rules/types.js'
import type { Store } from '../store/types.js'
import { type CompiledRule, compileRule } from './compile-rule.js'
import type { LimiterParts } from './create-limiter.js'
import type { PenaltyPart } from './penalised.js'
import type { RouteMatching } from './route-matching.js'

// A rule set compiled, and what the store and the limiter's parts must offer its rules: at
// start-up and for each update.

export function compiledRules(
  rules: readonly Rule[],
  algorithms: AlgorithmTable,
  routes: RouteMatching,
): CompiledRule[] {
  const keyCaches = new Map<string, CompiledRule['lastKey']>()
  return rules.map((rule, index) => compileRule(rule, index, algorithms, routes, keyCaches))
}

/** What the store and the parts must offer the rules: refused at start-up, naming the rules. */
export function checkRuleParts(
  store: Store,
  compiled: readonly CompiledRule[],
  parts: LimiterParts,
) {
  if (compiled.some((rule) => rule.settleWithinMs !== undefined)) {
    checkReserving(compiled, parts)
    checkSettlingStore(store, compiled)
  }
  if (compiled.some((rule) => rule.penalty !== undefined)) {
    checkPenalising(store, compiled, parts.penalties)
  }
  checkFallbackStore(store, compiled)
}

/** Rules that settle need the reservations part (a composed limiter may lack it). */
function checkReserving(compiled: readonly CompiledRule[], parts: LimiterParts): void {
  if (parts.reservations !== undefined) return
  const rules = compiled.filter((rule) => rule.settleWithinMs !== undefined).map((rule) => rule.id)
  throw invalidOption(
    'reservations',
    `rules ${rules.map((id) => `"${id}"`).join(', ')} settle their charges (settle), but this limiter was composed without reservations: add reservations to createRateLimit's parts`,
  )
}

/** Rules that settle need a store that can: refused at start-up, not on the first settle. */
function checkSettlingStore(store: Store, compiled: readonly CompiledRule[]): void {
  if (typeof store.settle === 'function') return
  const rules = compiled.filter((rule) => rule.settleWithinMs !== undefined).map((rule) => rule.id)
  throw invalidOption(
    'store',
    `rules ${rules.map((id) => `"${id}"`).join(', ')} settle their charges (settle), but the store has no settle method`,
  )
}

/** Rules that penalise need the penalties part, and a store that keeps offences (`settle`'s way). */
function checkPenalising(
  store: Store,
  compiled: readonly CompiledRule[],
  part: PenaltyPart | undefined,
): void {
  const rules = compiled.filter((rule) => rule.penalty !== undefined).map((rule) => rule.id)
  // Rules validated elsewhere (defineRules) reach a composed limiter with their penalty.
  if (part === undefined) {
    throw invalidOption(
      'penalties',
      `rules ${rules.map((id) => `"${id}"`).join(', ')} penalise repeated denials (penalty), but this limiter was composed without penalties: add penalties to createRateLimit's parts`,
    )
  }
  part.checkStore(store, rules)
}

/** Rules that fall back need a store that decides locally: refused at start-up, naming them. */
function checkFallbackStore(store: Store, compiled: readonly CompiledRule[]): void {
  if (typeof store.consumeLocally === 'function') return
  const rules = compiled.filter((rule) => rule.fallback).map((rule) => `"${rule.id}"`)
  if (rules.length === 0) return
  throw invalidOption(
    'store',
    `rules ${rules.join(', ')} have onStoreError: 'fallback': wrap the store in fallbackStore(store, { instances })`,
  )
}
