import { createHash } from 'node:crypto'

/**
 * Redis keys: `<prefix>:<rule>:{<key>}`. The identity (`charge.key`) is the hash tag, so every
 * rule keyed on the same identity lands in the same Redis Cluster slot and one script call can
 * decide them all; rules keyed on different identities may land in different slots (see
 * redis-store.ts for what happens then).
 *
 * Parts are encoded so that no content can escape its place:
 * - `%`, `{` and `}` become `%25`, `%7B`, `%7D`, so a client-controlled key can never open or
 *   close a hash tag; in the rule id `:` becomes `%3A` too, so rule and key never run together;
 * - a lone UTF-16 surrogate (not representable in UTF-8, where it would collapse into U+FFFD
 *   and collide with other keys) becomes `%uXXXX`;
 * - the empty string becomes `%0` (an empty `{}` would not be a hash tag at all);
 * - a part longer than 128 characters once escaped becomes `%#` + its SHA-256 (base64url), so a
 *   10 kB key costs 45 bytes in Redis.
 * Each form is distinct from every other, so different inputs always give different keys.
 */
const MAX_PART_LENGTH = 128
// The quick test (no `u` flag, cheaper per call) also matches surrogate pairs, which are fine
// as they are: a match only means the exact replacement runs, and that one leaves pairs alone.
const KEY_MAY_NEED_ESCAPES = /[%{}\uD800-\uDFFF]/
const KEY_SPECIALS_ALL = /[%{}]|\p{Cs}/gu
const RULE_MAY_NEED_ESCAPES = /[%{}:\uD800-\uDFFF]/
const RULE_SPECIALS_ALL = /[%{}:]|\p{Cs}/gu

function escapeChar(char: string): string {
  if (char === '%') return '%25'
  if (char === '{') return '%7B'
  if (char === '}') return '%7D'
  if (char === ':') return '%3A'
  return `%u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
}

function encodePart(text: string, mayNeedEscapes: RegExp, specialsAll: RegExp): string {
  if (text === '') return '%0'
  const escaped = mayNeedEscapes.test(text) ? text.replace(specialsAll, escapeChar) : text
  if (escaped.length <= MAX_PART_LENGTH) return escaped
  return `%#${createHash('sha256').update(escaped).digest('base64url')}`
}

/** The hash tag contents for an identity: what Redis Cluster hashes to pick the slot. */
export function encodeKey(key: string): string {
  return encodePart(key, KEY_MAY_NEED_ESCAPES, KEY_SPECIALS_ALL)
}

export function encodeRule(rule: string): string {
  return encodePart(rule, RULE_MAY_NEED_ESCAPES, RULE_SPECIALS_ALL)
}

/**
 * The Redis key holding the state of `key` under `rule`.
 * @example redisKey('tg', 'login-per-ip', 'ip:203.0.113.7') // 'tg:login-per-ip:{ip:203.0.113.7}'
 */
export function redisKey(prefix: string, rule: string, key: string): string {
  return `${prefix}:${encodeRule(rule)}:{${encodeKey(key)}}`
}
