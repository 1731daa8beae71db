// A leaf module: rules, options and the algorithm factories all answer a misspelt name with it.

/** The known name closest to a misspelt one, if any is close enough to be a likely typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const squash = (text: string) => text.toLowerCase().replace(/[_-]/g, '')
  const wanted = squash(name)
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(wanted.length / 3)) + 1
  for (const candidate of known) {
    const distance = editDistance(wanted, squash(candidate))
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
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

function editDistance(a: string, b: string): number {
  // One row of the table, updated in place; `diagonal` keeps the cell above and to the left.
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 0; i < a.length; i++) {
    let diagonal = row[0]!
    row[0] = i + 1
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]!
}
