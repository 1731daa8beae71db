import { didYouMean } from '../closest-name.js'
import { RateLimitError, type RateLimitErrorCode } from '../errors.js'
import type { ForeignOptions } from './foreign-options.js'
import { shown } from './option-values.js'

/**
 * Refuses, at start-up, every option that `where` does not know: from JavaScript a misspelt or
 * foreign option (`trustproxy`, `windowMs`) would otherwise change nothing and say nothing.
 * Each is named with the closest known option, or with the Tollgate equivalent of
 * another rate limiter's from `foreign` (express-rate-limit's: `FOREIGN_OPTIONS`; the lean
 * entries pass none, to leave those texts out of their bundles). `undefined` values count as not
 * given. Also refuses the other limiters' values of shared options (`standardHeaders: true`).
 * An algorithm factory refuses its parameters with it too (`noun` 'parameter', `code`
 * `ERR_RL_INVALID_RULE`).
 */
export function refuseUnknownOptions(
  options: object,
  known: readonly string[],
  where: string,
  foreign?: ForeignOptions,
  noun = 'option',
  code: RateLimitErrorCode = 'ERR_RL_INVALID_OPTION',
): void {
  const names = [...new Set(known)]
  const texts: string[] = []
  let field: string | undefined
  for (const [name, value] of Object.entries(options)) {
    const text =
      value === undefined
        ? undefined
        : known.includes(name)
          ? foreign?.value(name, value)
          : `unknown ${noun} ${shown(name)}: ${(foreign?.unknown ?? nearestOption)(name, names, noun)}`
    if (text === undefined) continue
    field ??= name
    texts.push(text)
  }
  if (field !== undefined) {
    throw new RateLimitError(code, `${where}: ${problemList(texts)}`, { field })
  }
}

/**
 * The known option (or parameter, or field: `noun`) closest to `name` (`guess` when given), or
 * the list of them.
 */
export function nearestOption(
  name: string,
  known: readonly string[],
  noun = 'option',
  guess?: string,
): string {
  return didYouMean(name, known, `known ${noun}s: ${known.join(', ')}`, guess)
}

/** Problems as one message: the one, or how many and each on its line (a rule's names the rule). */
export function problemList(lines: readonly string[]): string {
  return lines.length === 1 ? lines[0]! : `${lines.length} problems:\n  ${lines.join('\n  ')}`
}
