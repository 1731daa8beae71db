import { BASE64_ALPHABET } from './base64.js'
import { sha256 } from './sha256.js'

/** A key's `pk` value, `:` + 16 base64 characters + `:`. */
export type PartitionKeyHasher = (key: string) => string

const COLON = 0x3a

/**
 * The `pk` parameter for a rate-limit key: the first 12 bytes of SHA-256 over the key's UTF-8
 * bytes, as an RFC 9651 byte sequence (`:base64:`). Documented so that a client can compute
 * the partition key of a request it is about to make; a hash, so the key itself (an API key,
 * say) never appears in a response. Synchronous on every runtime (see `sha256.ts`), so an
 * admitted request's fields, `pk` included, are written as it passes.
 *
 * Nothing is cached but the last key: hashing a short key costs about what a cache costs with
 * many clients (a lookup that misses, an insertion, and entries that live long enough to be
 * copied by the garbage collector), while one client sending request after request is still
 * answered from the last value.
 */
export function createPartitionKeyHasher(): PartitionKeyHasher {
  const digest = new Uint8Array(32)
  let lastKey: string | undefined
  let lastValue = ''
  return function partitionKey(key) {
    if (key === lastKey) return lastValue
    lastValue = byteSequenceOf12Bytes(sha256(key, digest))
    lastKey = key
    return lastValue
  }
}

/** The character codes of a `pk` value, reused: the colons stay, the sixteen between change. */
const codes: number[] = /* @__PURE__ */ Array.from({ length: 18 }, () => COLON)

/**
 * The first 12 bytes of `bytes` as an RFC 9651 byte sequence: four whole groups of three bytes,
 * so sixteen base64 characters and no padding, made in one string (a tenth of the garbage of
 * joining characters one by one).
 */
function byteSequenceOf12Bytes(bytes: Uint8Array): string {
  for (let group = 0; group < 4; group++) {
    const at = group * 3
    const bits = (bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!
    for (let sextet = 0; sextet < 4; sextet++) {
      const index = (bits >> (18 - sextet * 6)) & 63
      codes[1 + group * 4 + sextet] = BASE64_ALPHABET.charCodeAt(index)
    }
  }
  return String.fromCharCode.apply(undefined, codes)
}
