import type { CompiledRule } from './compile-rule.js'

/**
 * The key the shared bucket of requests without any client IP is counted under: a rule never
 * lets a request through unlimited because the adapter could not tell who sent it.
 */
export const UNKNOWN_CLIENT_KEY = 'ip:'

/** The one key of a rule keyed on no identity (a concurrency limit for the whole process). */
const PROCESS_KEY = '*'

/**
 * The store key of a request under a rule, or undefined when the request lacks an identity the
 * rule keys on and the rule refuses such requests.
 *
 * - one identity: `name:value`, e.g. `api_key:k_123` (a name holds no `:`, so the value is
 *   everything after the first one);
 * - several: `name#length:value` per identity, joined by `&`, e.g.
 *   `account#5:alice&ip#11:203.0.113.7`; the lengths make any value content unambiguous;
 * - none (a rule for the whole process): `PROCESS_KEY`;
 * - fallback when an identity is missing: `ip:<client ip>`, or `UNKNOWN_CLIENT_KEY`.
 *
 * An empty string counts as missing: it would put every such request in one bucket unnoticed.
 */
export function keyOf(
  rule: CompiledRule,
  identities: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const names = rule.identity
  if (names.length === 0) return PROCESS_KEY
  if (names.length === 1) {
    const value = identities[names[0]!]
    if (value === undefined || value === '') return fallbackKey(rule, identities)
    // A hot key is built once: the same string also keeps its hash cached for the store.
    const cache = rule.lastKey
    if (cache.value === value) return cache.key
    const key = rule.keyPrefix + value
    cache.value = value
    cache.key = key
    return key
  }
  let key = ''
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!
    const value = identities[name]
    if (value === undefined || value === '') return fallbackKey(rule, identities)
    key += `${i === 0 ? '' : '&'}${name}#${value.length}:${value}`
  }
  return key
}

function fallbackKey(
  rule: CompiledRule,
  identities: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (rule.denyMissingIdentity) return undefined
  const { ip } = identities
  return ip === undefined || ip === '' ? UNKNOWN_CLIENT_KEY : `ip:${ip}`
}
