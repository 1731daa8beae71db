import { isPromiseLike } from '../limiter/engine.js'
import type { Limiter, MaybePromise, RulesUpdate } from '../limiter/types.js'
import type { Rule } from '../rules/types.js'
import type { Emit } from './fan-out.js'
import { reasonOf } from './timed-store.js'

/** A concurrency rule's line of waiting requests, as `holdings` follows it. */
const lineOf = (rule: Rule) =>
  rule.algorithm === 'concurrency' ? `${rule.queue ?? 0}/${rule.maxWait}` : ''

/**
 * `update` of an observed limiter: the limiter's own (validated, logged and counted as it is),
 * told to the observers as a `rules.update` event, applied or refused. The slots and waits of
 * concurrency and queue rules are followed from start-up (`holdings`), so a set with such a
 * rule the limiter was not made with is refused, naming it.
 */
export function observedUpdate(
  limiter: Limiter,
  startRules: readonly Rule[],
  emit: Emit,
  changed: (rules: readonly Rule[]) => void,
): NonNullable<Limiter['update']> {
  const followed = new Map(
    startRules
      .filter((rule) => rule.algorithm === 'concurrency' || rule.algorithm === 'leaky_queue')
      .map((rule) => [rule.id, rule] as const),
  )
  const follows = (rule: Rule) => {
    if (rule.algorithm !== 'concurrency' && rule.algorithm !== 'leaky_queue') return true
    const old = followed.get(rule.id)
    return (
      old !== undefined &&
      old.algorithm === rule.algorithm &&
      old.mode === rule.mode &&
      lineOf(old) === lineOf(rule)
    )
  }
  const applied = (summary: RulesUpdate) => {
    changed(limiter.rules)
    emit({ type: 'rules.update', outcome: 'applied', rules: limiter.rules, reason: undefined })
    return summary
  }
  const refused = (error: unknown): never => {
    emit({
      type: 'rules.update',
      outcome: 'refused',
      rules: limiter.rules,
      reason: reasonOf(error),
    })
    throw error
  }
  return (rules, given) => {
    let result: MaybePromise<RulesUpdate>
    try {
      result = limiter.update!(rules, { ...given, follows })
    } catch (error) {
      return refused(error)
    }
    return isPromiseLike(result) ? Promise.resolve(result).then(applied, refused) : applied(result)
  }
}
