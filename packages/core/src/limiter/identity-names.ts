import { didYouMean } from '../closest-name.js'
import { invalidOption, shown } from '../options/option-values.js'
import { type RuleIssue, RuleValidationError } from '../rules/issues.js'
import type { Rule } from '../rules/types.js'
import { identityNameProblem } from '../rules/validate-match.js'

/** The identities the adapters derive themselves. */
const BUILT_IN_IDENTITIES: readonly string[] = ['ip', 'api_key', 'user']

/**
 * Refuses, at start-up, a rule keyed on an identity that nothing provides: neither built in
 * nor declared in `customIdentities`. Such a rule would find the identity missing on every
 * request and fall back to the IP (a per-key limit silently becoming per-IP), or deny them all.
 * `api_key` is refused with `apiKeysLeftOut` by a middleware composed without reading it.
 * Returns the identities requests may carry: built in, and declared (checked).
 */
export function checkIdentityNames(
  rules: readonly Rule[],
  customIdentities: unknown,
  apiKeysLeftOut?: string,
): readonly string[] {
  const known = [...BUILT_IN_IDENTITIES, ...declaredNames(customIdentities)]
  const issues: RuleIssue[] = []
  for (const rule of rules) {
    for (const name of rule.match.identity) {
      const problem =
        name === 'api_key'
          ? apiKeysLeftOut
          : known.includes(name)
            ? undefined
            : unknownIdentity(name, known)
      if (problem !== undefined) issues.push({ rule: rule.id, field: 'match.identity', problem })
    }
  }
  if (issues.length > 0) throw new RuleValidationError(issues)
  return known
}

/**
 * A name close to a known one is answered with it; any other (`key`, `ip_address`) with the
 * known names (built in and declared). Either way, the fix for one of the app's own.
 */
export function unknownIdentity(name: string, known: readonly string[]): string {
  const hint = didYouMean(name, known, `known: ${known.join(', ')}`)
  return `no identity "${name}": ${hint}; or add it to customIdentities`
}

function declaredNames(value: unknown): readonly string[] {
  if (value === undefined) return []
  // Not a list: refused as a list of something that is not a name.
  for (const name of Array.isArray(value) ? value : [undefined]) {
    const problem =
      typeof name !== 'string'
        ? `expected a list of identity names, got ${shown(value)}`
        : (identityNameProblem(name) ??
          (BUILT_IN_IDENTITIES.includes(name) ? `"${name}" is built in` : ''))
    if (problem !== '') throw invalidOption('customIdentities', problem)
  }
  return value as string[]
}
