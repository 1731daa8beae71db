import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CHUNK, createKeyHasher, P, seededSecret } from './fingerprint.js'

/** The fingerprint recomputed in BigInt, straight from its definition (no floating point). */
function expected(key: string, secret: Float64Array): [bigint, bigint] {
  const prime = BigInt(P)
  const halves: [bigint, bigint] = [0n, 0n]
  for (const half of [0, 1] as const) {
    const point = BigInt(secret[2 * CHUNK + half]!)
    let hash = 0n
    for (let start = 0; start < Math.max(1, key.length); start += CHUNK) {
      let chunk = 0n
      for (let i = start; i < Math.min(key.length, start + CHUNK); i++) {
        chunk += BigInt(secret[half * CHUNK + i - start]!) * BigInt(key.charCodeAt(i) + 1)
      }
      // Horner over chunks: the first chunk is the leading coefficient.
      hash = start === 0 ? chunk % prime : (hash * point + chunk) % prime
    }
    halves[half] = hash
  }
  return halves
}

const anyKey = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom('\uffff', '\u0000', 'a'), maxLength: 300 }),
  fc.constantFrom('', 'x'.repeat(CHUNK), 'x'.repeat(CHUNK + 1), '\uffff'.repeat(4 * CHUNK)),
)

describe('key fingerprints', () => {
  it('are exactly the multilinear hash modulo 2^31 − 1 (no rounding anywhere)', () => {
    fc.assert(
      fc.property(anyKey, fc.integer(), (key, seed) => {
        const hasher = createKeyHasher(seed)
        hasher.hash(key)
        const [first, second] = expected(key, seededSecret(seed))
        expect([BigInt(hasher.first), BigInt(hasher.second)]).toEqual([first, second])
      }),
      { numRuns: 2000 },
    )
  })

  it('draw every secret value uniformly below 2^31 − 1, and a new secret per hasher', () => {
    const secret = seededSecret(7)
    expect(secret.every((value) => Number.isInteger(value) && value >= 0 && value < P)).toBe(true)
    const a = createKeyHasher()
    const b = createKeyHasher()
    a.hash('ip:203.0.113.7')
    b.hash('ip:203.0.113.7')
    expect([a.first, a.second]).not.toEqual([b.first, b.second])
  })

  it('tell apart 300,000 similar keys, and keys across the 64-unit chunk boundary', () => {
    const hasher = createKeyHasher()
    const seen = new Set<string>()
    const keys = [
      ...Array.from({ length: 300_000 }, (_, i) => `ip:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`),
      'x'.repeat(CHUNK),
      `${'x'.repeat(CHUNK)}\u0000`,
      `\u0000${'x'.repeat(CHUNK)}`,
      `${'x'.repeat(CHUNK - 1)}y${'x'.repeat(CHUNK)}`,
      `${'x'.repeat(CHUNK)}${'x'.repeat(CHUNK - 1)}y`,
      '',
      '\u0000',
    ]
    for (const key of keys) {
      hasher.hash(key)
      seen.add(`${hasher.first}:${hasher.second}`)
    }
    expect(seen.size).toBe(keys.length)
  }, 60_000)

  it('refuses a seed that is not a whole number', () => {
    expect(() => createKeyHasher(1.5)).toThrow(expect.objectContaining({ field: 'seed' }))
  })
})
