import type { AlgorithmTable } from '../algorithms/table.js'
import type { Algorithm, AlgorithmName } from '../algorithms/types.js'
import { isRateLimitError } from '../errors.js'
import type { CompiledRule } from '../limiter/compile-rule.js'
import { toMilliseconds } from '../rules/duration.js'
import { type RuleIssue, RuleValidationError } from '../rules/issues.js'
import { HTTP_METHODS } from '../rules/route.js'
import type { Rule } from '../rules/types.js'
import { identityNameProblem, isRecord, ownValue, typeName } from '../rules/validate-match.js'
import { isValidatedRule } from '../rules/validate-rule.js'

// The edge entry's rule validation: the checks of `defineRules` for the rules it takes, as a
// table of fields and short templated messages that name the rule and the field (the same
// `RuleValidationError`, `ERR_RL_INVALID_RULE`). What it does not take (queues, concurrency,
// routes, calendar windows, sub-window counters) is refused, naming the field.

/** The algorithms by kind: a rate rule takes `rate`, `burst`, `period`; a window rule the rest. */
const KINDS: Readonly<Record<string, 'rate' | 'window'>> = {
  token_bucket: 'rate',
  gcra: 'rate',
  leaky_bucket: 'rate',
  fixed_window: 'window',
  sliding_log: 'window',
  sliding_window: 'window',
  sliding_counter: 'window',
}
const PARAMS = { rate: ['rate', 'burst', 'period'], window: ['limit', 'window'] } as const
/** The factories' parameters, as read from a rule. */
type ParamValues = Record<string, number> & { periodMs?: number }

/** A rule as given: any of its fields may be anything. */
type Raw = { readonly [field: string]: unknown } & {
  readonly [K in 'id' | 'description' | 'match' | 'algorithm' | 'cost' | 'mode']?: unknown
} & { readonly onStoreError?: unknown; readonly onMissingIdentity?: unknown }

const FIELDS = [
  'id',
  'description',
  'match',
  'algorithm',
  'rate',
  'period',
  'burst',
  'limit',
  'window',
  'cost',
  'mode',
  'onStoreError',
  'onMissingIdentity',
]
/** Fields of `RuleConfig` this entry leaves to `@tollgate/hono`, refused by name. */
const ELSEWHERE = [
  'costByRoute',
  'delay',
  'nodelay',
  'maxWait',
  'queue',
  'queueOrder',
  'timeZone',
  'buckets',
  'route',
]
const CHOICES: ReadonlyArray<readonly [field: string, values: readonly string[]]> = [
  ['mode', ['enforce', 'shadow']],
  ['onStoreError', ['open', 'closed']],
  ['onMissingIdentity', ['ip', 'deny']],
]
const BUILT_IN_IDENTITIES = ['ip', 'api_key', 'user']
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** Why a field is refused: the entries that take it. */
export const ELSEWHERE_PROBLEM = 'not taken by the edge entry (@tollgate/hono or /lean take it)'

/**
 * Validates and compiles the rules of an edge middleware: a `RuleValidationError` listing every
 * problem, or the rules as the limiter's deciding code reads them. Rules validated by
 * `defineRules` are taken too, if their algorithm and fields are ones this entry takes.
 */
export function compileEdgeRules(
  items: unknown,
  algorithms: AlgorithmTable,
  customIdentities: readonly string[],
): CompiledRule[] {
  const issues: RuleIssue[] = []
  if (!Array.isArray(items) || items.length === 0) {
    throw new RuleValidationError([
      { rule: '#0', field: 'rules', problem: `expected a non-empty list, got ${typeName(items)}` },
    ])
  }
  const compiled: CompiledRule[] = []
  const seen = new Set<unknown>()
  items.forEach((item: unknown, index) => {
    const raw = item as Raw
    const given = isRecord(raw) ? raw.id : undefined
    const label = typeof given === 'string' && given !== '' ? given : `#${index + 1}`
    const before = issues.length
    const issue = (field: string, problem: string) => issues.push({ rule: label, field, problem })
    if (!isRecord(raw)) {
      issue('rule', `expected an object, got ${typeName(raw)}`)
      return
    }
    const validated = isValidatedRule(raw)
    if (seen.has(given)) issue('id', 'duplicate id (ids name the rule state)')
    seen.add(given)
    if (typeof given !== 'string' || !ID.test(given)) {
      issue('id', `expected 1–64 letters, digits, ".", "_" or "-", got ${typeName(given)}`)
    }
    for (const [field, value] of Object.entries(raw)) {
      if (value === undefined || FIELDS.includes(field)) continue
      if (validated && field === 'costByRoute' && Object.keys(value as object).length === 0)
        continue
      issue(field, ELSEWHERE.includes(field) ? ELSEWHERE_PROBLEM : 'unknown field')
    }
    if (raw.description !== undefined && typeof raw.description !== 'string') {
      issue('description', `expected a string, got ${typeName(raw.description)}`)
    }
    for (const [field, values] of CHOICES) {
      const value = raw[field]
      if (value !== undefined && !values.includes(value as string)) {
        issue(field, `expected "${values.join('" or "')}", got ${typeName(value)}`)
      }
    }
    const match = matchOf(raw.match, issue, customIdentities)
    const algorithm = algorithmOf(raw, validated, algorithms, issue)
    const cost = raw.cost ?? 1
    if (!Number.isSafeInteger(cost) || (cost as number) < 0) {
      issue('cost', `expected a whole number ≥ 0, got ${typeName(cost)}`)
    } else if (algorithm !== undefined && (cost as number) > algorithm.limit) {
      issue('cost', `${cost} exceeds the capacity of ${algorithm.limit}: it could never pass`)
    }
    if (issues.length > before || algorithm === undefined || match === undefined) return
    const mode = (raw.mode as Rule['mode'] | undefined) ?? 'enforce'
    compiled.push({
      index,
      id: given as string,
      rule: raw as unknown as Rule,
      algorithm,
      policy: algorithm.policy,
      mode,
      shadow: mode === 'shadow',
      failClosed: raw.onStoreError === 'closed',
      denyMissingIdentity: raw.onMissingIdentity === 'deny',
      plans: match.plan,
      identity: match.identity,
      keyPrefix: `${match.identity[0]}:`,
      lastKey: { value: '', key: '' },
      cost: cost as number,
      costs: undefined,
      targets: match.method?.map((method) => ({ method, pattern: undefined })) ?? [],
    })
  })
  if (issues.length > 0) throw new RuleValidationError(issues)
  return compiled
}

type EdgeMatch = {
  readonly identity: readonly string[]
  readonly plan?: readonly string[]
  readonly method?: readonly string[]
}

/** A rule's `match`: identities (built in or declared), plans, methods; no routes. */
function matchOf(
  value: unknown,
  issue: (field: string, problem: string) => void,
  customIdentities: readonly string[],
): EdgeMatch | undefined {
  if (!isRecord(value)) {
    issue('match', `expected an object such as { identity: 'ip' }, got ${typeName(value)}`)
    return undefined
  }
  let ok = true
  const fail = (field: string, problem: string) => {
    ok = false
    issue(`match.${field}`, problem)
  }
  for (const [field, item] of Object.entries(value)) {
    if (item === undefined || field === 'identity' || field === 'plan' || field === 'method')
      continue
    fail(field, field === 'route' ? ELSEWHERE_PROBLEM : 'unknown field')
  }
  const known = [...BUILT_IN_IDENTITIES, ...customIdentities]
  const given = value as { identity?: unknown; plan?: unknown; method?: unknown }
  const identity = listOf(
    given.identity ?? null,
    'identity',
    fail,
    (name) =>
      identityNameProblem(name) ??
      (known.includes(name)
        ? undefined
        : `no identity "${name}" (built in: ${BUILT_IN_IDENTITIES.join(', ')}; declare others in customIdentities)`),
  )
  if (identity !== undefined && new Set(identity).size !== identity.length) {
    fail('identity', `names an identity twice: ${identity.join(', ')}`)
  }
  const plan = listOf(given.plan, 'plan', fail, (plan) => (plan === '' ? 'empty plan' : undefined))
  const method = listOf(given.method, 'method', fail, (method) =>
    HTTP_METHODS.includes(method.toUpperCase()) ? undefined : `unknown method "${method}"`,
  )
  if (!ok || identity === undefined) return undefined
  return {
    identity,
    ...(plan === undefined ? {} : { plan: [...new Set(plan)] }),
    ...(method === undefined ? {} : { method: [...new Set(method.map((m) => m.toUpperCase()))] }),
  }
}

/** A string or a non-empty list of strings, each checked by `check`; undefined when absent. */
function listOf(
  value: unknown,
  field: string,
  fail: (field: string, problem: string) => void,
  check: (item: string) => string | undefined,
): string[] | undefined {
  if (value === undefined) return undefined
  const items = typeof value === 'string' ? [value] : value
  if (!Array.isArray(items) || items.length === 0) {
    fail(field, `expected a string or a non-empty list, got ${typeName(value)}`)
    return undefined
  }
  const before = items.length
  const good = items.filter((item: unknown) => {
    const problem =
      typeof item === 'string' ? check(item) : `expected a string, got ${typeName(item)}`
    if (problem !== undefined) fail(field, problem)
    return problem === undefined
  })
  return good.length === before ? good : undefined
}

/** The rule's algorithm, built by the app's factory from the rule's fields. */
function algorithmOf(
  raw: Raw,
  validated: boolean,
  algorithms: AlgorithmTable,
  issue: (field: string, problem: string) => void,
): Algorithm | undefined {
  const given = raw.algorithm
  const name = (given === 'sliding_counter' ? 'sliding_window' : given) as AlgorithmName
  const kind = typeof given === 'string' ? ownValue(KINDS, given) : undefined
  if (kind === undefined) {
    const taken = Object.keys(KINDS).join(', ')
    issue(
      'algorithm',
      given === 'leaky_queue' || given === 'concurrency'
        ? `${given} is ${ELSEWHERE_PROBLEM}`
        : `expected one of ${taken}, got ${typeName(given)}`,
    )
    return undefined
  }
  const wanted: readonly string[] = PARAMS[kind]
  const values: ParamValues = {}
  let ok = true
  for (const field of [...PARAMS.rate, ...PARAMS.window]) {
    const problem = paramProblem(field, raw[field], wanted.includes(field), name, validated, values)
    if (problem === undefined) continue
    ok = false
    issue(field, problem)
  }
  if (!ok) return undefined
  const factory = ownValue(algorithms, name)
  if (factory === undefined) {
    issue('algorithm', `${name} is not in the algorithms option: add ${name} to it`)
    return undefined
  }
  try {
    return factory(values as never)
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    const field = { periodMs: 'period', windowMs: 'window' }[error.field ?? ''] ?? error.field
    issue(field ?? 'algorithm', error.message.replace(/^\[tollgate\] [A-Za-z]+: /, ''))
    return undefined
  }
}

/** Reads one parameter into `values` (as the factories name it); a problem, or none. */
function paramProblem(
  field: string,
  value: unknown,
  wanted: boolean,
  name: string,
  validated: boolean,
  values: ParamValues,
): string | undefined {
  if (!wanted) return value === undefined ? undefined : `not a field of ${name}; remove it`
  if (value === undefined) {
    if (field !== 'period') return `required by ${name}`
    values.periodMs = 1000
    return undefined
  }
  if (field === 'period' || field === 'window')
    return durationProblem(field, value, validated, values)
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    return `expected a whole number ≥ 1, got ${typeName(value)}`
  }
  values[field] = value as number
  return undefined
}

/** Reads `period` or `window` into `values` (as `periodMs`, `windowMs`); a problem, or none. */
function durationProblem(
  field: 'period' | 'window',
  value: unknown,
  validated: boolean,
  values: ParamValues,
): string | undefined {
  if (field === 'window' && typeof value === 'string' && /^(day|week|month|year)$/.test(value)) {
    return `a calendar window is ${ELSEWHERE_PROBLEM}`
  }
  // A rule `defineRules` validated holds whole ms.
  const ms = validated && typeof value === 'number' ? value : toMilliseconds(value)
  if (typeof ms === 'string') return ms
  values[`${field}Ms`] = ms
  return undefined
}
