// A leaf module: rules, options and the algorithm factories all answer a misspelt name with it.

/**
 * The known name closest to a misspelt one, if any is close enough to be a likely typo: the
 * least edit distance, case, `_` and `-` aside.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  const squash = (text: string) => text.toLowerCase().replace(/[_-]/g, '')
  const a = squash(name)
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(a.length / 3)) + 1
  for (const candidate of known) {
    const b = squash(candidate)
    // One row of the edit-distance table, updated in place; `diagonal` keeps the cell above and
    // to the left.
    const row = [...Array(b.length + 1).keys()]
    for (let i = 0; i < a.length; i++) {
      let diagonal = row[0]!
      row[0] = i + 1
      for (let j = 1; j <= b.length; j++) {
        const above = row[j]!
        // The least of a deletion, an insertion and a substitution (free when the letters match).
        row[j] = Math.min(above, row[j - 1]!, a[i] === b[j - 1] ? diagonal - 1 : diagonal) + 1
        diagonal = above
      }
    }
    if (row[b.length]! < bestDistance) {
      best = candidate
      bestDistance = row[b.length]!
    }
  }
  return best
}

/**
 * `did you mean "<the closest known name>"?` (`guess`, when given, instead), or `otherwise` when
 * none is close enough.
 */
export function didYouMean(
  name: string,
  known: readonly string[],
  otherwise: string,
  guess = closest(name, known),
): string {
  return guess === undefined ? otherwise : `did you mean "${guess}"?`
}
