// The limiter's key builder and store-reply checks before they were rewritten smaller, kept
// only for the differential test (key-differential.test.ts).
import { MAX_FIELD_INTEGER } from '../../algorithms/integer.js'
import type { Decision } from '../../decision.js'
import { shown } from '../../options/option-values.js'
import type { CompiledRule } from '../compile-rule.js'

const PROCESS_KEY = '*'

export function oldKeyOf(
  rule: CompiledRule,
  identities: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const names = rule.identity
  if (names.length === 0) return PROCESS_KEY
  if (names.length === 1) {
    const value = identities[names[0]!]
    if (value === undefined || value === '') return fallbackKey(rule, identities)
    const cache = rule.lastKey
    if (cache.value === value) return cache.key
    const key = rule.keyPrefix + value
    cache.value = value
    cache.key = key
    return key
  }
  let key = ''
  for (const name of names) {
    const value = identities[name]
    if (value === undefined || value === '') return fallbackKey(rule, identities)
    key += `${key && '&'}${name}#${value.length}:${value}`
  }
  return key
}

function fallbackKey(
  rule: CompiledRule,
  identities: { readonly ip?: string | undefined },
): string | undefined {
  if (rule.denyMissingIdentity) return undefined
  return `ip:${identities.ip ?? ''}`
}

/** The message the old check threw for a reply's decisions, or undefined when it passed. */
export function oldCountProblem(decisions: unknown, count: number): string | undefined {
  if (!Array.isArray(decisions) || decisions.length !== count) {
    return `the store answered ${Array.isArray(decisions) ? decisions.length : 'no'} decisions for ${count} charges`
  }
  return undefined
}

/** The old check of a store's decision for one rule: the error's message and field, if any. */
export function oldDecisionProblem(
  ruleId: string,
  reply: unknown,
): { message: string; field: string | undefined } | undefined {
  if (typeof reply !== 'object' || reply === null) {
    return {
      message: `the store answered ${shown(reply)} for rule "${ruleId}", which the limiter cannot use`,
      field: undefined,
    }
  }
  const { allowed, remaining, limit, resetAfterMs, retryAfterMs, delayMs } = reply as Decision
  const d = { allowed, remaining, limit, resetAfterMs, retryAfterMs, delayMs }
  const unusable: keyof typeof d | undefined =
    typeof allowed !== 'boolean'
      ? 'allowed'
      : !(Number.isInteger(remaining) && remaining >= 0 && remaining <= MAX_FIELD_INTEGER)
        ? 'remaining'
        : !(Number.isInteger(limit) && limit >= 0 && limit <= MAX_FIELD_INTEGER)
          ? 'limit'
          : !(Number.isSafeInteger(resetAfterMs) && resetAfterMs >= 0)
            ? 'resetAfterMs'
            : !(allowed || (Number.isSafeInteger(retryAfterMs) && retryAfterMs! >= 0))
              ? 'retryAfterMs'
              : delayMs !== undefined && !(Number.isSafeInteger(delayMs) && delayMs >= 0)
                ? 'delayMs'
                : undefined
  if (unusable === undefined) return undefined
  return {
    message: `the store answered ${unusable} ${shown(d[unusable])} for rule "${ruleId}", which the limiter cannot use`,
    field: unusable,
  }
}
