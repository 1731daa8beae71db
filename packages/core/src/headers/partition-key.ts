import { serializeByteSequence } from './structured-fields.js'

type Digest = (algorithm: 'SHA-256', data: Uint8Array) => Promise<ArrayBuffer>
type Utf8Encoder = { encode(text: string): Uint8Array }

/** Bytes of the SHA-256 digest kept: 96 bits, 16 base64 characters, no padding. */
const PARTITION_KEY_BYTES = 12

/** Keys per cache generation; two are kept, each entry the key's length plus about 100 bytes. */
const PARTITION_KEY_CACHE_SIZE = 4096

/** A key's `pk` value: at once when it was hashed recently, else once Web Crypto answers. */
export type PartitionKeyHasher = (key: string) => string | Promise<string>

/**
 * SHA-256 over the UTF-8 bytes of `text` (a lone surrogate as U+FFFD, as `TextEncoder` has it),
 * answered at once: what a runtime with a synchronous hash offers (on Node, `nodeSha256` from
 * `@tollgate/core/node`). Web Crypto's digest is asynchronous, and costs a request that misses
 * the cache a trip through the event loop. `base64`, when the runtime has it, gives the same
 * digest as standard base64 with padding, without the bytes (on Node a quarter of the time:
 * no buffer is made).
 */
export type Sha256Digest = ((text: string) => Uint8Array) & {
  readonly base64?: ((text: string) => string) | undefined
}

/** Base64 characters of the kept bytes: 12 bytes are four whole groups of three, no padding. */
const PARTITION_KEY_BASE64_LENGTH = (PARTITION_KEY_BYTES / 3) * 4

/**
 * The `pk` parameter for a rate-limit key: the first 12 bytes of SHA-256 over the key's UTF-8
 * bytes, as an RFC 9651 byte sequence (`:base64:`). Documented so that a client can compute
 * the partition key of a request it is about to make; a hash, so the key itself (an API key,
 * say) never appears in a response. Uses `sha256` when given (the runtime's synchronous hash),
 * else Web Crypto (`crypto.subtle`), present in Node ≥ 19, Deno, Bun and Workers, which answers
 * asynchronously; then the values of recent keys are cached and returned synchronously, so a
 * returning client's request never waits for a digest.
 * @param cacheSize keys per cache generation with Web Crypto (see `PARTITION_KEY_CACHE_SIZE`)
 */
export function createPartitionKeyHasher(
  cacheSize: number = PARTITION_KEY_CACHE_SIZE,
  sha256?: Sha256Digest,
): PartitionKeyHasher {
  // Reached structurally: core compiles without DOM or Node types (see tsconfig "types": []).
  const subtle = (globalThis as { crypto?: { subtle?: { digest: Digest } } }).crypto?.subtle
  const Encoder = (globalThis as { TextEncoder?: new () => Utf8Encoder }).TextEncoder
  if (sha256 === undefined && (subtle === undefined || Encoder === undefined)) {
    throw new TypeError('[tollgate] partition keys need Web Crypto (crypto.subtle) and TextEncoder')
  }
  if (!Number.isSafeInteger(cacheSize) || cacheSize < 1) {
    throw new TypeError(
      `[tollgate] partition key cache size: expected a whole number ≥ 1, got ${String(cacheSize)}`,
    )
  }
  if (sha256 !== undefined) return synchronousHasher(sha256)
  const encoder = new Encoder!()
  // Two generations: when the recent one fills up it becomes the older one, and a key found
  // there moves back. Keys in use survive a turnover, where clearing one map would drop them
  // all at once; memory stays bounded by two generations.
  let recent = new Map<string, string>()
  let older = new Map<string, string>()
  const remember = (key: string, value: string) => {
    if (recent.size >= cacheSize) {
      older = recent
      recent = new Map()
    }
    recent.set(key, value)
  }
  return function partitionKey(key) {
    const cached = recent.get(key)
    if (cached !== undefined) return cached
    const kept = older.get(key)
    if (kept !== undefined) {
      remember(key, kept)
      return kept
    }
    return subtle!.digest('SHA-256', encoder.encode(key)).then((digest) => {
      const value = serializeByteSequence(new Uint8Array(digest, 0, PARTITION_KEY_BYTES))
      remember(key, value)
      return value
    })
  }
}

/**
 * With a synchronous hash nothing is cached but the last key: hashing a short key costs about
 * what a cache costs with many clients (a lookup that misses, an insertion, and entries that
 * live long enough to be copied by the garbage collector), while one client sending request
 * after request is still answered from the last value.
 */
function synchronousHasher(sha256: Sha256Digest): PartitionKeyHasher {
  const base64 = sha256.base64
  let lastKey: string | undefined
  let lastValue = ''
  return function partitionKey(key) {
    if (key === lastKey) return lastValue
    lastValue =
      base64 === undefined
        ? serializeByteSequence(sha256(key).subarray(0, PARTITION_KEY_BYTES))
        : `:${base64(key).slice(0, PARTITION_KEY_BASE64_LENGTH)}:`
    lastKey = key
    return lastValue
  }
}
