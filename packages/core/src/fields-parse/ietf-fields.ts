import { MAX_WAIT_MS, secondsToMs } from './retry-after.js'
import { parseSfDictionary, parseSfList, type SfMember, type SfValue } from './structured-parse.js'
import type { ReadPolicy } from './types.js'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** A non-negative integer parameter; anything else (a decimal, a string, -1) is ignored. */
function count(value: SfValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** Seconds as whole ms; RFC-wise these are Integers, but a Decimal is read too. */
function seconds(value: SfValue | undefined): number | undefined {
  if (typeof value !== 'number' || !(value >= 0)) return undefined
  return Math.min(MAX_WAIT_MS, Math.ceil(value * 1000))
}

function text(value: SfValue | undefined): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'object' && 'token' in value) return value.token
  return undefined
}

function bytes(value: SfValue | undefined): string | undefined {
  return typeof value === 'object' && 'bytes' in value ? value.bytes : undefined
}

/** Sets only the figures that are there, so a policy never holds an explicit `undefined`. */
function assign(policy: Mutable<ReadPolicy>, figures: Partial<ReadPolicy>): void {
  for (const [key, value] of Object.entries(figures)) {
    if (value !== undefined) (policy as Record<string, unknown>)[key] = value
  }
}

function policyFigures(member: SfMember): Partial<ReadPolicy> {
  const w = count(member.params.get('w'))
  return {
    quota: count(member.params.get('q')),
    windowMs: w === undefined || w === 0 ? undefined : Math.min(MAX_WAIT_MS, w * 1000),
    quotaUnit: text(member.params.get('qu')),
    // Tollgate's vendor-prefixed parameter (drafts 8–11 §3.1), or a bare one from other servers.
    burst: count(member.params.get('tollgate-burst') ?? member.params.get('burst')),
  }
}

const identity = (name: string, pk: string | undefined) =>
  pk === undefined ? name : `${name}\0${pk}`

/**
 * The current form (drafts 8 to 12): `RateLimit-Policy: "name";q=…;w=…` and `RateLimit:
 * "name";r=…;t=…` (drafts 8 to 11) or `"name";a=…;w=…;c=…` (draft 12), matched by name (and by
 * `pk` where both sides carry one). Undefined when neither field is a list of named items.
 */
export function readCurrentForm(
  policyField: string | null | undefined,
  limitField: string | null | undefined,
): ReadPolicy[] | undefined {
  const policies = named(policyField)
  const limits = named(limitField)
  if (policies === undefined && limits === undefined) return undefined
  const out = new Map<string, Mutable<ReadPolicy>>()
  const entry = (member: SfMember) => {
    const name = text(member.value)!
    const pk = bytes(member.params.get('pk'))
    const key = identity(name, pk)
    // An item with no pk pairs with the same name's item that has one, and the other way round;
    // two different pks are two partitions.
    const found =
      out.get(key) ??
      [...out.values()].find(
        (p) => p.name === name && (pk === undefined || p.partitionKey === undefined),
      )
    if (found !== undefined) {
      if (pk !== undefined && found.partitionKey === undefined) found.partitionKey = pk
      return found
    }
    const created: Mutable<ReadPolicy> = { name }
    if (pk !== undefined) created.partitionKey = pk
    out.set(key, created)
    return created
  }
  for (const member of policies ?? []) assign(entry(member), policyFigures(member))
  for (const member of limits ?? []) {
    // Draft 12 renamed `r` to `a` and `t` to `w` (on `RateLimit`, `w` is the effective window,
    // not the policy's): a member of either draft is read, the newer name first.
    const params = member.params
    assign(entry(member), {
      remaining: count(params.get('a') ?? params.get('r')),
      resetMs: seconds(params.get('w') ?? params.get('t')),
      cost: count(params.get('c')),
    })
  }
  return [...out.values()]
}

/** The members of a list whose items are names (String, or Token as draft 8 allowed). */
function named(field: string | null | undefined): SfMember[] | undefined {
  if (typeof field !== 'string') return undefined
  const list = parseSfList(field)
  if (list === undefined || list.length === 0) return undefined
  const members = list.filter((member) => text(member.value) !== undefined)
  return members.length === 0 ? undefined : members
}

/** Draft-6/7 `RateLimit-Policy`: `10;w=1, 1000;w=3600` (numbers, unnamed). */
function legacyPolicies(field: string | null | undefined): Partial<ReadPolicy>[] {
  if (typeof field !== 'string') return []
  const list = parseSfList(field) ?? []
  return list
    .filter((member) => count(member.value) !== undefined)
    .map((member) => ({ ...policyFigures(member), quota: count(member.value) }))
}

/**
 * The single-valued drafts: draft 7's `RateLimit: limit=…, remaining=…, reset=…`, or draft 6's
 * `RateLimit-Limit`, `-Remaining`, `-Reset`. The one policy they describe is unnamed; its
 * quota comes from the `RateLimit-Policy` item whose number equals the limit (else the first).
 */
export function readSingleValuedDrafts(
  header: (name: string) => string | undefined,
): { form: 'draft-7' | 'draft-6'; policy: ReadPolicy } | undefined {
  const dictionary = parseDictionaryField(header('ratelimit'))
  let form: 'draft-7' | 'draft-6'
  let figures: Partial<ReadPolicy>
  if (dictionary !== undefined) {
    form = 'draft-7'
    figures = {
      limit: count(dictionary.get('limit')?.value),
      remaining: count(dictionary.get('remaining')?.value),
      resetMs: seconds(dictionary.get('reset')?.value),
    }
  } else {
    // Draft 6's RateLimit-Limit may carry the policy after the number: `10, 10;w=1`.
    const limit = parseSfList(header('ratelimit-limit') ?? '')?.[0]?.value
    const remaining = header('ratelimit-remaining')
    const reset = header('ratelimit-reset')
    form = 'draft-6'
    figures = {
      limit: count(limit),
      remaining: remaining === undefined ? undefined : count(parseSfList(remaining)?.[0]?.value),
      resetMs: reset === undefined ? undefined : secondsToMs(reset),
    }
  }
  if (
    figures.limit === undefined &&
    figures.remaining === undefined &&
    figures.resetMs === undefined
  )
    return undefined
  const candidates = legacyPolicies(header('ratelimit-policy'))
  const matching = candidates.find((p) => p.quota === figures.limit) ?? candidates[0]
  const policy: Mutable<ReadPolicy> = { name: '' }
  assign(policy, { ...matching, ...figures })
  return { form, policy }
}

function parseDictionaryField(field: string | undefined): Map<string, SfMember> | undefined {
  if (field === undefined) return undefined
  const dictionary = parseSfDictionary(field)
  if (dictionary === undefined) return undefined
  return ['limit', 'remaining', 'reset'].some((key) => dictionary.has(key)) ? dictionary : undefined
}
