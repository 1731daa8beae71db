// The limiter's key builder and store-reply count check before they were rewritten smaller,
// kept only for the differential test (key-differential.test.ts).
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
