import { invalidOption, shown } from '../options/option-values.js'

/**
 * Keyed 62-bit fingerprints of key strings, so that the memory store can forget the strings.
 *
 * Each half is a multilinear hash modulo the Mersenne prime P = 2^31 − 1 with secret random
 * coefficients: for a key of UTF-16 code units c₀…c₆₃,
 *   h = Σ kᵢ · (cᵢ + 1)  mod P.
 * For two different keys of at most 64 code units the two vectors differ somewhere, and there
 * the secret kᵢ is uniform, so the halves collide with probability exactly 1/P whatever the keys
 * are: no structure to exploit, unlike seeded MurmurHash-style mixers, which have
 * seed-independent collisions. Longer keys are cut into 64-unit chunks whose hashes are
 * combined as a polynomial in a further secret point r (≤ (chunks + 1)/P). The two halves use
 * independent secrets, so a pair of short keys collides with probability 1/P² ≈ 2^-62.
 *
 * Arithmetic is exact in doubles: kᵢ < 2^31 and cᵢ + 1 ≤ 2^16, so 64 products sum below 2^53,
 * and one modular reduction per chunk suffices.
 */
export const P = 2147483647
const TWO_POW_31 = 2147483648
/** 1 / 2^31, written out: a quotient would keep it in bundles that never hash (see NOMINAL_MS). */
const INVERSE_TWO_POW_31 = 4.656612873077393e-10
export const CHUNK = 64
/** Secret layout: [k₀…k₆₃ of the first half, k₀…k₆₃ of the second half, r₁, r₂]. */
const SECRET_LENGTH = 130 // 2 * CHUNK + 2, written out: a sum would stay in bundles that never hash

/** Writes the fingerprint of `key` into `first` and `second` (each in [0, 2^31 − 1)). */
export type KeyHasher = {
  first: number
  second: number
  hash(key: string): void
}

type RandomSource = { getRandomValues<T extends Uint32Array>(array: T): T }

/**
 * A hasher with its own secret, drawn from `crypto.getRandomValues` (Node ≥ 19, Deno, Bun,
 * Workers, browsers), or expanded from `seed` in tests.
 */
export function createKeyHasher(seed?: number): KeyHasher {
  // The random secret is drawn on the first hash, not here: Workers refuse random values at
  // global scope, where `app.use(rateLimit(rules))` builds the store.
  const source = seed === undefined ? randomSource() : undefined
  let secret: Float64Array | undefined = seed === undefined ? undefined : seededSecret(seed)
  const hasher: KeyHasher = {
    first: 0,
    second: 0,
    hash(key) {
      if (secret === undefined) secret = randomSecret(source!)
      const length = key.length
      if (length <= CHUNK) {
        // Two sums per half over alternate code units: shorter chains of dependent additions.
        let a = 0
        let b = 0
        let c = 0
        let d = 0
        let i = 0
        for (; i + 1 < length; i += 2) {
          const even = key.charCodeAt(i) + 1
          const odd = key.charCodeAt(i + 1) + 1
          a += secret[i]! * even
          b += secret[CHUNK + i]! * even
          c += secret[i + 1]! * odd
          d += secret[CHUNK + i + 1]! * odd
        }
        if (i < length) {
          const unit = key.charCodeAt(i) + 1
          a += secret[i]! * unit
          b += secret[CHUNK + i]! * unit
        }
        // `reduce`, written out for both halves: this runs on every request.
        const x = a + c
        const y = b + d
        const xHigh = Math.floor(x * INVERSE_TWO_POW_31)
        const yHigh = Math.floor(y * INVERSE_TWO_POW_31)
        const xFolded = xHigh + (x - xHigh * TWO_POW_31)
        const yFolded = yHigh + (y - yHigh * TWO_POW_31)
        hasher.first = xFolded >= P ? xFolded - P : xFolded
        hasher.second = yFolded >= P ? yFolded - P : yFolded
        return
      }
      hashLong(key, secret, hasher)
    },
  }
  return hasher
}

/** Keys longer than one chunk: h = (…(x₀ · r + x₁) · r + …) + x_last  mod P. */
function hashLong(key: string, secret: Float64Array, out: KeyHasher): void {
  const r1 = secret[2 * CHUNK]!
  const r2 = secret[2 * CHUNK + 1]!
  let first = 0
  let second = 0
  for (let start = 0; start < key.length; start += CHUNK) {
    const end = Math.min(key.length, start + CHUNK)
    let a = 0
    let b = 0
    for (let i = start; i < end; i++) {
      const unit = key.charCodeAt(i) + 1
      a += secret[i - start]! * unit
      b += secret[CHUNK + i - start]! * unit
    }
    first = reduce(multiplyMod(first, r1) + reduce(a))
    second = reduce(multiplyMod(second, r2) + reduce(b))
  }
  out.first = first
  out.second = second
}

/** x mod P for a whole 0 ≤ x < 2^53, using 2^31 ≡ 1 (mod P). */
function reduce(x: number): number {
  // Multiplying by 2^-31 is exact, and cheaper than dividing by 2^31.
  const high = Math.floor(x * INVERSE_TWO_POW_31)
  const folded = high + (x - high * TWO_POW_31)
  return folded >= P ? folded - P : folded
}

/** a · b mod P for a, b < P, split so that every product stays below 2^53. */
function multiplyMod(a: number, b: number): number {
  const high = reduce((a >>> 16) * b)
  return reduce(high * 65536 + (a & 0xffff) * b)
}

/** The runtime's `crypto`, checked when the store is built so a missing one fails at start-up. */
function randomSource(): RandomSource {
  const crypto = (globalThis as { crypto?: RandomSource }).crypto
  if (crypto === undefined || typeof crypto.getRandomValues !== 'function') {
    throw invalidOption(
      'seed',
      'the memory store needs crypto.getRandomValues for its secret key fingerprints, and this runtime has none',
    )
  }
  return crypto
}

function randomSecret(crypto: RandomSource): Float64Array {
  const secret = new Float64Array(SECRET_LENGTH)
  const draw = new Uint32Array(1)
  for (let i = 0; i < SECRET_LENGTH; i++) {
    // Uniform in [0, P): 31 random bits, redrawn in the one case (2^31 − 1) that is ≥ P.
    let value = P
    while (value === P) value = crypto.getRandomValues(draw)[0]! >>> 1
    secret[i] = value
  }
  return secret
}

/**
 * A reproducible secret for tests (SplitMix32). Anyone who knows the seed can aim collisions.
 * Exported (not from the package) so tests can recompute fingerprints independently.
 */
export function seededSecret(seed: number): Float64Array {
  if (!Number.isSafeInteger(seed)) {
    throw invalidOption('seed', `expected a whole number, got ${shown(seed)}`)
  }
  let state = seed | 0
  const secret = new Float64Array(SECRET_LENGTH)
  for (let i = 0; i < SECRET_LENGTH; i++) {
    let value = P
    while (value === P) {
      state = (state + 0x9e3779b9) | 0
      let z = state
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
      value = (z ^ (z >>> 16)) >>> 1
    }
    secret[i] = value
  }
  return secret
}
