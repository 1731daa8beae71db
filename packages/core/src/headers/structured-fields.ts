import { MAX_FIELD_INTEGER } from '../algorithms/integer.js'
import { byteSequence } from './byte-sequence.js'

/**
 * A small RFC 9651 (Structured Field Values) serializer: the types the RateLimit fields use.
 * Integers are JS numbers, strings are JS strings, tokens are `{ token }`, byte sequences are
 * `Uint8Array`, booleans are booleans. Decimals, dates and display strings are not needed and
 * not supported. Every function throws a `TypeError` where RFC 9651 says serialization fails.
 */
export type SfBareItem = number | string | boolean | Uint8Array | { readonly token: string }

/** Parameters in order: `[key, value]`; a `true` value is written as the bare key. */
type SfParameters = ReadonlyArray<readonly [key: string, value: SfBareItem]>

/** A list member or dictionary value: a bare item with its parameters. */
export type SfItem = { readonly value: SfBareItem; readonly params?: SfParameters | undefined }

function fail(what: string, value: unknown): never {
  throw new TypeError(`[tollgate] cannot serialize ${what} as a structured field: ${String(value)}`)
}

/** An Integer: a whole number of at most 15 digits. */
export function serializeInteger(value: number): string {
  if (!Number.isInteger(value) || Math.abs(value) > MAX_FIELD_INTEGER) fail('integer', value)
  return String(value)
}

/** `"…"` with `"` and `\` escaped; only printable ASCII (0x20–0x7E) is allowed. */
export function serializeString(value: string): string {
  if (/[^\x20-\x7e]/.test(value)) fail('string', JSON.stringify(value))
  return `"${value.replace(/["\\]/g, '\\$&')}"`
}

/** A Token: a letter or `*`, then token characters, `:` or `/`. */
export function serializeToken(value: string): string {
  const first = value.charCodeAt(0)
  const alpha = (first >= 65 && first <= 90) || (first >= 97 && first <= 122)
  if (!(alpha || first === 42) || !/^[!#$%&'*+.^_`|~0-9A-Za-z:/-]*$/.test(value.slice(1))) {
    fail('token', value)
  }
  return value
}

/** Keys: a lower-case letter or `*`, then lower-case letters, digits, `_`, `-`, `.`, `*`. */
export function serializeKey(key: string): string {
  if (!/^[a-z*][a-z0-9_.*-]*$/.test(key)) fail('key', key)
  return key
}

/** A Boolean: `?1` or `?0`. */
function serializeBoolean(value: boolean): string {
  return value ? '?1' : '?0'
}

/** Any bare item, by its JavaScript type. */
export function serializeBareItem(value: SfBareItem): string {
  if (typeof value === 'number') return serializeInteger(value)
  if (typeof value === 'string') return serializeString(value)
  if (typeof value === 'boolean') return serializeBoolean(value)
  if (value instanceof Uint8Array) return byteSequence(value)
  return serializeToken(value.token)
}

/** `;key=value` for each parameter, in order; nothing for none. */
function serializeParameters(params: SfParameters | undefined): string {
  if (params === undefined) return ''
  let out = ''
  for (const [key, value] of params) {
    out += `;${serializeKey(key)}`
    if (value !== true) out += `=${serializeBareItem(value)}`
  }
  return out
}

/** An Item: its bare item followed by its parameters. */
export function serializeItem(item: SfItem): string {
  return serializeBareItem(item.value) + serializeParameters(item.params)
}

/** A List of items, members separated by `, `. (Inner lists are not needed here.) */
export function serializeList(members: readonly SfItem[]): string {
  return members.map(serializeItem).join(', ')
}

/** A Dictionary: `key=value;params`, or the bare key (with parameters) for a `true` value. */
export function serializeDictionary(entries: ReadonlyArray<readonly [key: string, item: SfItem]>) {
  return entries
    .map(([key, item]) =>
      item.value === true
        ? serializeKey(key) + serializeParameters(item.params)
        : `${serializeKey(key)}=${serializeItem(item)}`,
    )
    .join(', ')
}
