// `mergeGroups` as it was before it was made smaller, copied as it was, for
// merge-groups-differential.test.ts (and the old responder's copy) to compare the current one
// with. Test code only: not exported from the package.
import type { FieldGroup, FieldWrite } from '../field-merge.js'
import type { HeaderEntries } from '../types.js'

const DRAFT_7 = 'ratelimit'
const POLICY = 'ratelimit-policy'
const RETRY_AFTER = 'retry-after'

type Read = (lowerCaseName: string) => string | undefined

/** `mergeFields` knowing only `groups`: those of the families whose fields `entries` hold. */
export function mergeGroups(
  groups: readonly FieldGroup[],
  entries: HeaderEntries,
  existing: Read,
): Array<readonly [name: string, value: string, write: FieldWrite]> {
  const writes: Array<readonly [string, string, FieldWrite]> = []
  const denies = entries.some(([name]) => name.toLowerCase() === RETRY_AFTER)
  const denied = existing(RETRY_AFTER) !== undefined
  for (const [name, value] of entries) {
    const lower = name.toLowerCase()
    const group = groups.find((candidate) => candidate.has(lower, value))
    let write: FieldWrite = 'set'
    if ((lower === DRAFT_7 || lower === POLICY) && formsDiffer(existing(lower), value)) {
      // Two middlewares configured with different drafts: one field cannot hold both forms (a
      // draft-7 Dictionary and a current-form List do not parse as one field). The denial's is
      // kept, as for every group; between two admissions or two denials, the current form.
      if (!(denies !== denied ? denies : isCurrentForm(value))) continue
    } else if (group !== undefined) {
      if (group.keeps(existing, entries, denies, denied)) continue
    } else if (lower === RETRY_AFTER) {
      if (Number(existing(RETRY_AFTER)) >= Number(value)) continue
    } else if (lower !== 'content-type') write = 'append'
    writes.push([name, value, write])
  }
  return writes
}

/**
 * The current drafts' `RateLimit` and `RateLimit-Policy` are Lists of named members
 * (`"per-ip";r=5;t=1`); draft-6/7's are a Dictionary or Items of figures (`limit=10, …`, `10;w=1`).
 */
function isCurrentForm(value: string): boolean {
  return value.trimStart().startsWith('"')
}

function formsDiffer(current: string | undefined, next: string): boolean {
  return current !== undefined && isCurrentForm(current) !== isCurrentForm(next)
}
