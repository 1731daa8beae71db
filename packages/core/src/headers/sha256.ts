/**
 * SHA-256 (FIPS 180-4) over the UTF-8 bytes of a string, in plain JavaScript, for partition keys.
 *
 * Written out rather than taken from the runtime: a partition key is a hash of a short key per
 * request, one block. Profiled in an adapter under load, Node's one-shot `crypto.hash` took
 * about 2.7 µs a key against 1.1 µs here (a native call whose code and data go cold between
 * requests, though it wins in a loop), and Web Crypto's `digest` is asynchronous, a trip through
 * the event loop for every new client (measured in the history of docs/benchmarks.md). This one
 * is synchronous on every runtime.
 */

/**
 * The first 32 bits of the fractional parts of `root` of the first `count` primes: the cube roots
 * give the round constants (FIPS 180-4 §4.2.2), the square roots the initial state (§5.3.3).
 * Derived rather than listed, which keeps bundles smaller; every value is exact in double
 * precision (the tests compare digests with Node's).
 */
function fractionsOfRoots(root: (x: number) => number, count: number): Int32Array {
  const words = new Int32Array(count)
  for (let n = 2, found = 0; found < count; n++) {
    let prime = true
    for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false
    if (prime) words[found++] = ((root(n) % 1) * 0x100000000) | 0
  }
  return words
}

// Pure: a bundle that never hashes drops them (they run at start-up otherwise).
const ROUND_CONSTANTS = /* @__PURE__ */ fractionsOfRoots(Math.cbrt, 64)
const INITIAL_STATE = /* @__PURE__ */ fractionsOfRoots(Math.sqrt, 8)

/** The hash state, eight words, and the message schedule: a block's 16, then 48 from them. */
const state = /* @__PURE__ */ new Int32Array(8)
const schedule = /* @__PURE__ */ new Int32Array(64)
/**
 * The buffer messages are encoded and padded in, reused: room for a key of 317 UTF-16 units
 * (three UTF-8 bytes each at most, and the padding); a longer key gets one of its own.
 */
const kept = /* @__PURE__ */ new Uint8Array(1024)

function bufferFor(text: string): Uint8Array {
  const needed = text.length * 3 + 72
  return needed <= kept.length ? kept : new Uint8Array(needed)
}

type Utf8Encoder = { encodeInto(text: string, into: Uint8Array): { written: number } }
let encoder: Utf8Encoder | undefined

/**
 * Writes `text` as UTF-8 into `bytes`: ASCII (nearly every key) byte by byte, anything else
 * through `TextEncoder`, which every runtime has (a lone surrogate becomes U+FFFD).
 */
function encodeUtf8(text: string, bytes: Uint8Array): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code > 0x7f) {
      // Reached structurally: core compiles without DOM or Node types.
      encoder ??= new (
        globalThis as unknown as { TextEncoder: new () => Utf8Encoder }
      ).TextEncoder()
      return encoder.encodeInto(text, bytes).written
    }
    bytes[i] = code
  }
  return text.length
}

/** One 64-byte block of `bytes` from `offset` folded into `state` (§6.2.2). */
function compress(bytes: Uint8Array, offset: number): void {
  const w = schedule
  for (let i = 0; i < 16; i++, offset += 4) {
    w[i] =
      (bytes[offset]! << 24) |
      (bytes[offset + 1]! << 16) |
      (bytes[offset + 2]! << 8) |
      bytes[offset + 3]!
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!
    const y = w[i - 2]!
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0
  }
  let a = state[0]!
  let b = state[1]!
  let c = state[2]!
  let d = state[3]!
  let e = state[4]!
  let f = state[5]!
  let g = state[6]!
  let h = state[7]!
  for (let i = 0; i < 64; i++) {
    const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (h + sum1 + ((e & f) ^ (~e & g)) + ROUND_CONSTANTS[i]! + w[i]!) | 0
    const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (sum0 + ((a & b) ^ (a & c) ^ (b & c))) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  state[0] = (state[0]! + a) | 0
  state[1] = (state[1]! + b) | 0
  state[2] = (state[2]! + c) | 0
  state[3] = (state[3]! + d) | 0
  state[4] = (state[4]! + e) | 0
  state[5] = (state[5]! + f) | 0
  state[6] = (state[6]! + g) | 0
  state[7] = (state[7]! + h) | 0
}

/** SHA-256 of `text`'s UTF-8 bytes, its 32 bytes written into `digest` (returned). */
export function sha256(text: string, digest: Uint8Array): Uint8Array {
  const bytes = bufferFor(text)
  const length = encodeUtf8(text, bytes)
  // Padding (§5.1.1): a 1 bit, zeros, and the length in bits in the block's last 8 bytes.
  const padded = (length + 72) & ~63
  bytes[length] = 0x80
  bytes.fill(0, length + 1, padded - 5)
  const bits = length * 8
  bytes[padded - 5] = (bits / 0x100000000) | 0
  bytes[padded - 4] = bits >>> 24
  bytes[padded - 3] = bits >>> 16
  bytes[padded - 2] = bits >>> 8
  bytes[padded - 1] = bits
  state.set(INITIAL_STATE)
  for (let offset = 0; offset < padded; offset += 64) compress(bytes, offset)
  for (let i = 0; i < 32; i++) digest[i] = state[i >> 2]! >>> (24 - (i & 3) * 8)
  return digest
}
