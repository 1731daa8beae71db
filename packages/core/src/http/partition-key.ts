import { serializeByteSequence } from './structured-fields.js'

type Digest = (algorithm: 'SHA-256', data: Uint8Array) => Promise<ArrayBuffer>
type Utf8Encoder = { encode(text: string): Uint8Array }

/** Bytes of the SHA-256 digest kept: 96 bits, 16 base64 characters, no padding. */
export const PARTITION_KEY_BYTES = 12
const CACHE_LIMIT = 1024

/**
 * The `pk` parameter for a rate-limit key: the first 12 bytes of SHA-256 over the key's UTF-8
 * bytes, as an RFC 9651 byte sequence (`:base64:`). Documented so that a client can compute
 * the partition key of a request it is about to make; a hash, so the key itself (an API key,
 * say) never appears in a response. Uses Web Crypto (`crypto.subtle`), present in Node ≥ 19,
 * Deno, Bun and Workers; hence asynchronous.
 */
export function createPartitionKeyHasher(): (key: string) => Promise<string> {
  // Reached structurally: core compiles without DOM or Node types (see tsconfig "types": []).
  const subtle = (globalThis as { crypto?: { subtle?: { digest: Digest } } }).crypto?.subtle
  const Encoder = (globalThis as { TextEncoder?: new () => Utf8Encoder }).TextEncoder
  if (subtle === undefined || Encoder === undefined) {
    throw new TypeError('[tollgate] partition keys need Web Crypto (crypto.subtle) and TextEncoder')
  }
  const encoder = new Encoder()
  // The same few keys come back request after request; a small cache saves a digest each time.
  const cache = new Map<string, string>()
  return async function partitionKey(key) {
    const cached = cache.get(key)
    if (cached !== undefined) return cached
    const digest = await subtle.digest('SHA-256', encoder.encode(key))
    const value = serializeByteSequence(new Uint8Array(digest, 0, PARTITION_KEY_BYTES))
    if (cache.size >= CACHE_LIMIT) cache.clear()
    cache.set(key, value)
    return value
  }
}
