import type { HeaderFamily, StandardHeaders } from '../config.js'
import { CURRENT } from './current.js'
import { DRAFT_6 } from './draft-6.js'
import { DRAFT_7 } from './draft-7.js'
import { X_RATELIMIT } from './x-ratelimit.js'

/**
 * Every family of rate-limit fields, in the order a response carries them. Adding one is its
 * module, a line here, and its `standardHeaders` value in `StandardHeaders`; option validation,
 * field names, merging and writing all read this table.
 */
export const FAMILIES: readonly HeaderFamily[] = [X_RATELIMIT, DRAFT_6, DRAFT_7, CURRENT]

/** Every `standardHeaders` value, as the option accepts them (`false`: none). */
export const STANDARD_HEADERS: ReadonlyArray<StandardHeaders | false> = [
  false,
  ...FAMILIES.flatMap((family) => family.standardHeaders),
]

/** The families a configuration sends, in the order their fields go out. */
export function familiesFor(options: {
  readonly legacyHeaders: boolean
  readonly standardHeaders: StandardHeaders | false
}): readonly HeaderFamily[] {
  return FAMILIES.filter((family) =>
    family === X_RATELIMIT
      ? options.legacyHeaders
      : options.standardHeaders !== false &&
        family.standardHeaders.includes(options.standardHeaders),
  )
}

/** Every field name a set of families can send, for `Access-Control-Expose-Headers`. */
export function familyFieldNames(families: readonly HeaderFamily[]): string[] {
  return families.flatMap((family) => family.names)
}

export { DRAFT_6, X_RATELIMIT }
