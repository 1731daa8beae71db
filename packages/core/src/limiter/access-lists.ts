import { parseIp } from '../identity/ip.js'
import { createIpMatcher } from '../identity/ip-prefix.js'
import { invalidOption, shown } from '../options/option-values.js'
import { isRecord } from '../rules/validate-match.js'
import { unknownIdentity } from './identity-names.js'
import type { Refusal, RequestFacts, Verdict } from './types.js'
import { combine, NONE } from './verdict.js'

// Allow and deny lists, compiled by the factory an app calls (`accessLists`): an app without
// lists bundles none of this, and the limiter holds only the check that its `lists` is there.

/**
 * Identity name → the values listed (`ip`: addresses, CIDR ranges, or `loopback`, `linklocal`,
 * `private`). A request is listed when any of its identities has a listed value. Names are
 * those rules may key on: `ip`, `api_key`, `user` and the limiter's `customIdentities`.
 */
export type AccessList = Readonly<Record<string, string | readonly string[]>>

/**
 * Tells a request's identities against the lists, at `now`: one call per request, no store
 * call. The verdict of a listed client (let through, or refused: reason `deny-list`), with no
 * decision, since no rule decided it; undefined for a client on neither list.
 */
export type ListCheck = (identities: RequestFacts['identities'], now: number) => Verdict | undefined

/** The lists compiled: what the limiter's `lists` option takes. */
export type AccessLists = {
  /** The identities the lists read, as `allow.ip`, `deny.api_key`. */
  readonly fields: readonly string[]
  /**
   * The check, once the limiter has made sure that each identity listed is one requests may
   * carry (`known`); throws `ERR_RL_INVALID_OPTION` naming `lists.<list>.<name>` otherwise.
   */
  readonly compile: (known: readonly string[]) => ListCheck
}

/**
 * Allow and deny lists, decided before any store call: an allowed client passes without a
 * charge or a field, a denied one is answered 403; a client on both is denied. Every value and
 * IP entry is checked here, a bad one refused naming its field (`deny.ip`); the identity names,
 * by the limiter given the lists.
 * @example
 * createLimiter({ rules, lists: accessLists({ allow: { ip: ['10.0.0.0/8'] }, deny: { api_key: 'k_revoked' } }) })
 */
export function accessLists(options: {
  readonly allow?: AccessList | undefined
  readonly deny?: AccessList | undefined
}): AccessLists {
  if (!isRecord(options)) throw invalidOption('lists', 'expected { allow, deny }')
  const fields: string[] = []
  for (const name of Object.keys(options)) {
    if (name !== 'allow' && name !== 'deny') {
      throw invalidOption(name, 'unknown list: expected allow or deny')
    }
  }
  const allowed = compileList('allow', options.allow, fields)
  const denied = compileList('deny', options.deny, fields)
  return {
    fields,
    compile(known) {
      for (const field of fields) {
        const name = field.slice(field.indexOf('.') + 1)
        if (!known.includes(name))
          throw invalidOption(`lists.${field}`, unknownIdentity(name, known))
      }
      return (identities, now) => {
        if (denied(identities))
          return { ...combine(NONE, now), allowed: false, reason: 'deny-list', refusal: DENIED }
        if (allowed(identities)) return combine(NONE, now)
        return undefined
      }
    },
  }
}

/** A denied client's 403: no rule was consulted, so no policy and no Retry-After. */
const DENIED: Refusal = {
  detail: 'This client is not allowed to use this API.',
  code: 'deny-listed',
}

type Matcher = (identities: RequestFacts['identities']) => boolean

function compileList(option: string, list: AccessList | undefined, fields: string[]): Matcher {
  if (list === undefined) return () => false
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
    const values = typeof given === 'string' ? [given] : given
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || v.trim() === '')) {
      throw invalidOption(
        field,
        `expected a value or a list of values (non-empty strings), got ${shown(given)}`,
      )
    }
    fields.push(field)
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
