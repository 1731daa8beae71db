import { invalidOption } from '../options/option-values.js'
import { composedWithout } from '../rules/issues.js'
import type { Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import type { LimiterParts } from './create-limiter.js'

// What the store and the limiter's parts must offer a compiled rule set: at start-up and for each
// update.

/** What the store and the parts must offer the rules: refused at start-up, naming the rules. */
export function checkRuleParts(
  store: Store,
  compiled: readonly CompiledRule[],
  parts: LimiterParts,
) {
  const refuse = (field: string, which: (rule: CompiledRule) => boolean, problem: string) => {
    const ids = compiled.filter(which).map((rule) => `"${rule.id}"`)
    if (ids.length > 0) throw invalidOption(field, `rules ${ids.join(', ')} ${problem}`)
  }
  // Rules that settle need the reservations part (a composed limiter may lack it), and a store
  // that can: refused at start-up, not on the first settle.
  const settles = (rule: CompiledRule) => rule.settleWithinMs !== undefined
  const settle = 'settle their charges (settle), but'
  if (parts.reservations === undefined) {
    refuse('reservations', settles, `${settle} ${composedWithout('reservations')}`)
  }
  if (typeof store.settle !== 'function') {
    refuse('store', settles, `${settle} the store has no settle method`)
  }
  // Rules that penalise need the penalties part (rules validated elsewhere, by defineRules,
  // reach a composed limiter with their penalty), and a store that keeps offences.
  const penalises = (rule: CompiledRule) => rule.rule.penalty !== undefined
  const part = parts.penalties
  if (part === undefined) {
    refuse(
      'penalties',
      penalises,
      `penalise repeated denials (penalty), but ${composedWithout('penalties')}`,
    )
  } else if (compiled.some(penalises)) {
    part.checkStore(
      store,
      compiled.filter(penalises).map((rule) => rule.id),
    )
  }
  // Rules that fall back need the local fallback part, and a store that decides locally.
  if (parts.localFallback === undefined) {
    refuse(
      'localFallback',
      (rule) => rule.fallback,
      `fall back (onStoreError), but ${composedWithout('localFallback')}`,
    )
  } else parts.localFallback.checkStore(store, refuse)
}
