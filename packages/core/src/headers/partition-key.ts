import { byteSequence } from './byte-sequence.js'
import { sha256 } from './sha256.js'

/** A key's `pk` value, `:` + 16 base64 characters + `:`. */
export type PartitionKeyHasher = (key: string) => string

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
    // 12 bytes: four whole groups of three, sixteen characters and no padding.
    lastValue = byteSequence(sha256(key, digest), 12)
    lastKey = key
    return lastValue
  }
}
