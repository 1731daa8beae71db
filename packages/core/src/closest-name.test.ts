import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { closest } from './closest-name.js'

/** The edit distance by its definition, the whole table kept (the module keeps one row). */
function distance(a: string, b: string): number {
  const table = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1]
      table[i]![j] = Math.min(
        table[i - 1]![j]! + 1,
        table[i]![j - 1]! + 1,
        table[i - 1]![j - 1]! + (same ? 0 : 1),
      )
    }
  }
  return table[a.length]![b.length]!
}

/** `closest` written out with the table above. */
function reference(name: string, known: readonly string[]): string | undefined {
  const squash = (text: string) => text.toLowerCase().replace(/[_-]/g, '')
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(squash(name).length / 3)) + 1
  for (const candidate of known) {
    const d = distance(squash(name), squash(candidate))
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

describe('closest', () => {
  it('finds a misspelt name', () => {
    expect(closest('brust', ['rate', 'burst'])).toBe('burst')
    expect(closest('trustproxy', ['trustProxy', 'store'])).toBe('trustProxy')
    expect(closest('zzzz', ['rate', 'burst'])).toBeUndefined()
  })

  it('answers as the edit distance by its definition does', () => {
    const word = fc.string({
      unit: fc.constantFrom('a', 'b', 'c', '_', 'A', '-', '😀'),
      maxLength: 9,
    })
    fc.assert(
      fc.property(word, fc.array(word, { maxLength: 6 }), (name, known) => {
        expect(closest(name, known)).toBe(reference(name, known))
      }),
      { numRuns: 2000 },
    )
  })
})
