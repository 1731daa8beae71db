import { invalidOption } from '../options/option-values.js'
import { composedWithout } from '../rules/issues.js'
import type { Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import type { LimiterParts } from './create-limiter.js'

// What the store and the limiter's parts must offer a compiled rule set: at start-up and for each
// update.

/** Refuses the rules `which` picks, if any, naming them: `rules "a", "b" <problem>`. */
export type RefuseRules = (
  field: string,
  which: (rule: CompiledRule) => boolean,
  problem: string,
) => void

/** A part some rules need, which checks that the store can serve them. */
type StorePart = { readonly checkStore: (store: Store, refuse: RefuseRules) => void }

/** What the store and the parts must offer the rules: refused at start-up, naming the rules. */
export function checkRuleParts(
  store: Store,
  compiled: readonly CompiledRule[],
  parts: LimiterParts,
) {
  const refuse: RefuseRules = (field, which, problem) => {
    const ids = compiled.filter(which).map((rule) => `"${rule.id}"`)
    if (ids.length > 0) throw invalidOption(field, `rules ${ids.join(', ')} ${problem}`)
  }
  // Rules that settle, penalise or fall back need their part (a composed limiter may lack it:
  // rules validated elsewhere, by defineRules, reach it with their fields), and a store that can
  // serve them, which the part checks: refused at start-up, not on the first request.
  const need = (
    part: StorePart | undefined,
    name: string,
    which: (rule: CompiledRule) => boolean,
    ruleField: string,
  ) => {
    if (part === undefined) refuse(name, which, `have ${ruleField}, which ${composedWithout(name)}`)
    else part.checkStore(store, refuse)
  }
  need(parts.reservations, 'reservations', (rule) => rule.settleWithinMs !== undefined, 'settle')
  need(parts.penalties, 'penalties', (rule) => rule.rule.penalty !== undefined, 'penalty')
  need(parts.localFallback, 'localFallback', (rule) => rule.fallback, "onStoreError: 'fallback'")
}
