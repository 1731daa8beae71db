import type { AlgorithmTable } from '../algorithms/table.js'
import type { Algorithm, AlgorithmName } from '../algorithms/types.js'
import { isRateLimitError } from '../errors.js'
import type { CompiledRule } from '../limiter/compile-rule.js'
import { type RuleIssue, RuleValidationError } from '../rules/issues.js'
import { HTTP_METHODS } from '../rules/route.js'
import { identityNameProblem, typeName } from '../rules/validate-match.js'
import { isValidatedRule } from '../rules/validate-rule.js'
import { edgeMilliseconds } from './edge-duration.js'

// The edge entry's rule validation: the checks of `defineRules` for the rules it takes, as
// tables of fields and short templated messages that name the rule and the field (the same
// `RuleValidationError`, `ERR_RL_INVALID_RULE`). What it does not take (queues, concurrency,
// routes, calendar windows, sub-window counters) is refused, naming the field.

/** A compiled rule as the edge entry decides it: `CompiledRule`'s fields that it reads. */
export type EdgeRule = Pick<
  CompiledRule,
  | 'id'
  | 'algorithm'
  | 'policy'
  | 'mode'
  | 'shadow'
  | 'failClosed'
  | 'denyMissingIdentity'
  | 'plans'
  | 'identity'
  | 'cost'
> & {
  /** The methods it matches (upper case), or undefined for any. */
  readonly methods: readonly string[] | undefined
}

/** Rate rules take `rate`, `burst`, `period`; window rules `limit`, `window`. */
const RATE = ['token_bucket', 'gcra', 'leaky_bucket']
const WINDOW = ['fixed_window', 'sliding_log', 'sliding_window', 'sliding_counter']
const PARAMS = ['rate', 'burst', 'period', 'limit', 'window']
/** The factories' names of the same parameters. */
const KEYS = ['rate', 'burst', 'periodMs', 'limit', 'windowMs']
const FIELDS = [
  'id',
  'description',
  'match',
  'algorithm',
  'cost',
  'mode',
  'onStoreError',
  'onMissingIdentity',
]
const CHOICES: Readonly<Record<string, readonly string[]>> = {
  mode: ['enforce', 'shadow'],
  onStoreError: ['open', 'closed'],
  onMissingIdentity: ['ip', 'deny'],
}
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/**
 * Why a field or option is refused: an unknown one, or one of `@tollgate/hono`'s this entry
 * leaves to it (named in the message, as the field is).
 */
export const ELSEWHERE_PROBLEM =
  'not taken by the edge entry (@tollgate/hono takes every field and option)'

/** Why `value` is not a whole number from `min` to `most` (the largest safe one unless given). */
export function wholeProblem(value: unknown, min: number, most?: number): string | undefined {
  // Past `most`: never when it is undefined (any comparison with undefined is false).
  if (Number.isSafeInteger(value) && !((value as number) < min || (value as number) > most!)) {
    return undefined
  }
  const range = most === undefined ? `≥ ${min}` : `from ${min} to ${most}`
  return `expected a whole number ${range}, got ${typeName(value)}`
}

type Issue = (field: string, problem: string) => void
type Raw = { readonly [field: string]: unknown } & {
  readonly [K in
    | 'id'
    | 'description'
    | 'match'
    | 'algorithm'
    | 'cost'
    | 'mode'
    | 'onStoreError'
    | 'onMissingIdentity'
    | 'identity']?: unknown
}

/**
 * Validates and compiles the rules of an edge middleware: a `RuleValidationError` listing every
 * problem, or the rules as they are decided. Rules validated by `defineRules` are taken too, if
 * their algorithm and fields are ones this entry takes.
 */
export function compileEdgeRules(
  items: unknown,
  algorithms: AlgorithmTable,
  identities: readonly string[],
): EdgeRule[] {
  const issues: RuleIssue[] = []
  const fail = (rule: string, field: string, problem: string) =>
    issues.push({ rule, field, problem })
  if (!Array.isArray(items) || items.length === 0) {
    fail('#0', 'rules', `expected a non-empty list, got ${typeName(items)}`)
  }
  const compiled: EdgeRule[] = []
  const ids = new Set<unknown>()
  ;(Array.isArray(items) ? items : []).forEach((item: unknown, index) => {
    const raw = (
      typeof item === 'object' && item !== null && !Array.isArray(item) ? item : {}
    ) as Raw
    const { id, match, cost = 1 } = raw
    const label = typeof id === 'string' && id !== '' ? id : `#${index + 1}`
    const before = issues.length
    const issue: Issue = (field, problem) => fail(label, field, problem)
    if (raw !== item) {
      issue('rule', `expected an object, got ${typeName(item)}`)
      return
    }
    if (ids.has(id)) issue('id', 'duplicate id (ids name the rule state)')
    ids.add(id)
    if (typeof id !== 'string' || !ID.test(id)) {
      issue('id', `expected 1–64 letters, digits, ".", "_" or "-", got ${typeName(id)}`)
    }
    for (const [field, value] of Object.entries(raw)) {
      if (value === undefined || FIELDS.includes(field) || PARAMS.includes(field)) continue
      // A validated rule has no costs by route, as an empty table.
      if (
        field === 'costByRoute' &&
        isValidatedRule(raw) &&
        Object.keys(value as object).length === 0
      )
        continue
      issue(field, ELSEWHERE_PROBLEM)
    }
    if (raw.description !== undefined && typeof raw.description !== 'string') {
      issue('description', `expected a string, got ${typeName(raw.description)}`)
    }
    for (const [field, values] of Object.entries(CHOICES)) {
      const value = raw[field]
      if (value !== undefined && !values.includes(value as string)) {
        issue(field, `expected "${values.join('" or "')}", got ${typeName(value)}`)
      }
    }
    const matched = matchOf(match, issue, identities)
    const algorithm = algorithmOf(raw, algorithms, issue)
    const costProblem = wholeProblem(cost, 0)
    if (costProblem !== undefined) issue('cost', costProblem)
    else if (algorithm && (cost as number) > algorithm.limit) {
      issue('cost', `${cost} exceeds the capacity of ${algorithm.limit}: it could never pass`)
    }
    if (issues.length > before || !algorithm || !matched) return
    const mode = raw.mode === 'shadow' ? 'shadow' : 'enforce'
    compiled.push({
      id: id as string,
      algorithm,
      policy: algorithm.policy,
      mode,
      shadow: mode === 'shadow',
      failClosed: raw.onStoreError === 'closed',
      denyMissingIdentity: raw.onMissingIdentity === 'deny',
      plans: matched.plan,
      identity: matched.identity,
      cost: cost as number,
      methods: matched.method,
    })
  })
  if (issues.length > 0) throw new RuleValidationError(issues)
  return compiled
}

/** A rule's `match`: identities (built in or declared), plans, methods; no routes. */
function matchOf(value: unknown, issue: Issue, identities: readonly string[]) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue('match', `expected an object such as { identity: 'ip' }, got ${typeName(value)}`)
    return undefined
  }
  const given = value as Raw
  let ok = true
  /** A string or a non-empty list of strings, each checked; undefined when absent or refused. */
  const list = (field: string, check: (item: string) => string | undefined) => {
    const item = given[field]
    if (item === undefined) return undefined
    const items: unknown[] = typeof item === 'string' ? [item] : Array.isArray(item) ? item : []
    const problems = items.map((one) =>
      typeof one === 'string' ? check(one) : `expected a string, got ${typeName(one)}`,
    )
    if (items.length === 0)
      problems.push(`expected a string or a non-empty list, got ${typeName(item)}`)
    const refused = problems.filter((problem) => problem !== undefined)
    for (const problem of refused) issue(`match.${field}`, problem)
    ok &&= refused.length === 0
    return refused.length === 0 ? (items as string[]) : undefined
  }
  for (const [field, item] of Object.entries(given)) {
    if (item === undefined || field === 'identity' || field === 'plan' || field === 'method')
      continue
    ok = false
    issue(`match.${field}`, ELSEWHERE_PROBLEM)
  }
  if (given.identity === undefined) {
    ok = false
    issue('match.identity', 'required: ip, api_key, user or another identity')
  }
  const identity = list(
    'identity',
    (name) =>
      identityNameProblem(name) ??
      (identities.includes(name)
        ? undefined
        : `no identity "${name}" (built in: ip, api_key, user; declare others in customIdentities)`),
  )
  if (identity && new Set(identity).size < identity.length) {
    ok = false
    issue('match.identity', 'names an identity twice')
  }
  const plan = list('plan', (plan) => (plan === '' ? 'a plan name cannot be empty' : undefined))
  const method = list('method', (method) =>
    HTTP_METHODS.includes(method.toUpperCase()) ? undefined : `unknown method "${method}"`,
  )
  if (!ok || identity === undefined) return undefined
  return {
    identity,
    plan: plan && [...new Set(plan)],
    method: method && [...new Set(method.map((name) => name.toUpperCase()))],
  }
}

/** The rule's algorithm, built by the app's factory from the rule's fields. */
function algorithmOf(raw: Raw, algorithms: AlgorithmTable, issue: Issue): Algorithm | undefined {
  const given = raw.algorithm as string
  const name = (given === 'sliding_counter' ? 'sliding_window' : given) as AlgorithmName
  const rate = RATE.includes(given)
  if (!rate && !WINDOW.includes(given)) {
    issue(
      'algorithm',
      `expected one of ${[...RATE, ...WINDOW].join(', ')}, got ${typeName(given)}: others are ${ELSEWHERE_PROBLEM}`,
    )
    return undefined
  }
  const values: Record<string, number> = { periodMs: 1000 }
  let ok = true
  PARAMS.forEach((field, i) => {
    const value = raw[field]
    let problem: string | number | undefined
    if (i < 3 !== rate) problem = value === undefined ? undefined : `not a field of ${name}`
    else if (value === undefined) problem = field === 'period' ? undefined : `required by ${name}`
    else if (field === 'rate' || field === 'burst' || field === 'limit') {
      problem = wholeProblem(value, 1) ?? (value as number)
    } else if (typeof value === 'string' && /^(day|week|month|year)$/.test(value)) {
      problem = `a calendar window is ${ELSEWHERE_PROBLEM}`
    } else {
      // A rule `defineRules` validated holds whole ms.
      problem = isValidatedRule(raw) ? (value as number) : edgeMilliseconds(value)
    }
    if (typeof problem === 'number') values[KEYS[i]!] = problem
    else if (problem !== undefined) {
      ok = false
      issue(field, problem)
    }
  })
  if (!ok) return undefined
  const factory = algorithms[name]
  if (typeof factory !== 'function' || !Object.hasOwn(algorithms, name)) {
    issue('algorithm', `${name} is not in the algorithms option: add ${name} to it`)
    return undefined
  }
  try {
    return factory(values as never)
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    const field =
      error.field === 'periodMs' ? 'period' : error.field === 'windowMs' ? 'window' : error.field
    issue(field ?? 'algorithm', error.message.replace(/^\[tollgate\] [A-Za-z]+: /, ''))
    return undefined
  }
}
