import { closest } from '../closest-name.js'
import { RateLimitError } from '../errors.js'
import type { ForeignOptions } from './foreign-options.js'

/**
 * Refuses, at start-up, every option that `where` does not know: from JavaScript a misspelt or
 * foreign option (`trustproxy`, `windowMs`) would otherwise change nothing and say nothing.
 * Each is named with the closest known option, or with the Tollgate equivalent of
 * another rate limiter's from `foreign` (express-rate-limit's: `FOREIGN_OPTIONS`; the lean
 * entries pass none, to leave those texts out of their bundles). `undefined` values count as not
 * given. Also refuses the other limiters' values of shared options (`standardHeaders: true`).
 */
export function refuseUnknownOptions(
  options: object,
  known: readonly string[],
  where: string,
  foreign?: ForeignOptions,
): void {
  const names = [...new Set(known)]
  const problems: { readonly field: string; readonly text: string }[] = []
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue
    if (known.includes(name)) {
      const hint = foreign?.value(name, value)
      if (hint !== undefined) problems.push({ field: name, text: hint })
      continue
    }
    const answer = (foreign?.unknown ?? nearestOption)(name, names)
    problems.push({ field: name, text: `unknown option "${name}": ${answer}` })
  }
  if (problems.length === 0) return
  const lines = problems.map((problem) => problem.text)
  const message =
    lines.length === 1 ? lines[0]! : `${lines.length} problems:\n  ${lines.join('\n  ')}`
  throw new RateLimitError('ERR_RL_INVALID_OPTION', `${where}: ${message}`, {
    field: problems[0]!.field,
  })
}

/** The known option closest to `name`, or the list of them. */
export function nearestOption(name: string, known: readonly string[]): string {
  const guess = closest(name, known)
  return guess === undefined ? `known options: ${known.join(', ')}` : `did you mean "${guess}"?`
}
