import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sha256 } from './sha256.js'

const nodeHex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const ours = (text: string) => Buffer.from(sha256(text, new Uint8Array(32))).toString('hex')

describe('sha256', () => {
  it('gives the digests of FIPS 180-4’s examples', () => {
    expect(ours('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(ours('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    )
    expect(ours('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('agrees with Node’s at every length around a block’s padding, one to four blocks', () => {
    for (let length = 0; length <= 260; length++) {
      for (const unit of ['a', 'é', '€', '😀']) {
        const text = unit.repeat(length).slice(0, length)
        expect(ours(text)).toBe(nodeHex(text))
      }
    }
  })

  it('agrees with Node’s for any UTF-16 text, lone surrogates as U+FFFD', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
      fc.constantFrom('a', ':', '.'),
    )
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 400 }), (text) => {
        expect(ours(text)).toBe(nodeHex(text))
      }),
      { numRuns: 3000 },
    )
  })

  it('hashes a key longer than the buffer it reuses, and the short key after it', () => {
    const long = 'k'.repeat(10_000) + '€'.repeat(3000)
    expect(ours(long)).toBe(nodeHex(long))
    // Three bytes a unit: from 318 units on, the reused buffer is too small for the padding.
    for (const units of [300, 317, 318, 340, 400]) {
      expect(ours('€'.repeat(units))).toBe(nodeHex('€'.repeat(units)))
    }
    expect(ours('ip:192.0.2.1')).toBe(nodeHex('ip:192.0.2.1'))
  })
})
