/** Lower-case forms of the field names written so far: a handful, fixed by the configuration. */
const lowerCaseNames = new Map<string, string>()

/** Field names come from configuration; the bound is a safety net against unbounded input. */
const MAX_NAMES = 256

/**
 * True when `name` is among `present`, the lower-case names of the fields already on a response
 * (what Node's `getHeaderNames()` returns). Adapters check each field they write, so that one the
 * app already set is appended to rather than replaced; Express has always set X-Powered-By, so
 * the check runs on every request there, and the lower-case name is looked up, not made anew.
 */
export function isFieldPresent(present: readonly string[], name: string): boolean {
  if (present.length === 0) return false
  let lower = lowerCaseNames.get(name)
  if (lower === undefined) {
    lower = name.toLowerCase()
    if (lowerCaseNames.size < MAX_NAMES) lowerCaseNames.set(name, lower)
  }
  return present.includes(lower)
}
