import { parseIp } from '../identity/ip.js'
import { createIpMatcher } from '../identity/ip-prefix.js'
import { invalidOption, shown } from '../options/option-values.js'
import { isRecord } from '../rules/validate-match.js'
import { knownIdentityNames, unknownIdentity } from './identity-names.js'
import type { AccessList, LimiterOptions, RequestFacts } from './types.js'

/** Where a request stands on the lists: let through, refused, or neither (`undefined`). */
export type Listed = 'allow' | 'deny' | undefined

/** Tells a request's identities against the lists; one call per request, no store call. */
export type ListCheck = (identities: RequestFacts['identities']) => Listed

/**
 * The `allowList` and `denyList` options compiled once, or undefined when neither is given (the
 * request path then checks nothing). Every identity name, value and IP entry is checked here:
 * a bad one is refused naming the option and field (`denyList.ip`).
 */
export function compileAccessLists(options: LimiterOptions): ListCheck | undefined {
  const { allowList, denyList } = options
  if (allowList === undefined && denyList === undefined) return undefined
  const known = knownIdentityNames(options.customIdentities)
  const allowed = allowList === undefined ? undefined : compileList('allowList', allowList, known)
  const denied = denyList === undefined ? undefined : compileList('denyList', denyList, known)
  return (identities) => {
    if (denied?.(identities)) return 'deny'
    if (allowed?.(identities)) return 'allow'
    return undefined
  }
}

type Matcher = (identities: RequestFacts['identities']) => boolean

function compileList(option: string, list: AccessList, known: readonly string[]): Matcher {
  if (!isRecord(list)) {
    throw invalidOption(
      option,
      `expected identity name → values, e.g. { ip: ['10.0.0.0/8'], api_key: ['k_1'] }, got ${shown(list)}`,
    )
  }
  const matchers: Matcher[] = []
  for (const [name, given] of Object.entries(list)) {
    if (given === undefined) continue
    const field = `${option}.${name}`
    if (!known.includes(name)) throw invalidOption(field, unknownIdentity(name, known))
    const values = typeof given === 'string' ? [given] : given
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || v.trim() === '')) {
      throw invalidOption(
        field,
        `expected a value or a list of values (non-empty strings), got ${shown(given)}`,
      )
    }
    matchers.push(name === 'ip' ? ipMatcher(values, field) : valueMatcher(name, values))
  }
  return (identities) => matchers.some((matches) => matches(identities))
}

function valueMatcher(name: string, values: readonly string[]): Matcher {
  const set = new Set(values)
  return (identities) => {
    const value = identities[name]
    return value !== undefined && set.has(value)
  }
}

/**
 * The `ip` identity against addresses and ranges. The identity is the client's key: its
 * address, or its network (`2001:db8:85a3:8d3::/64`, per `ipv6Prefix`), read as the network's
 * first address; a range narrower than that network matches only the network's first address.
 */
function ipMatcher(values: readonly string[], field: string): Matcher {
  const ranges = createIpMatcher(values, field)
  return (identities) => {
    const { ip: value } = identities
    if (value === undefined || value === '') return false
    const slash = value.indexOf('/')
    const ip = parseIp(slash < 0 ? value : value.slice(0, slash))
    return ip !== undefined && ranges.contains(ip)
  }
}
