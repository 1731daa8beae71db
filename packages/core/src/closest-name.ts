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
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution)
    }
    previous = current
  }
  return previous[b.length]!
}
