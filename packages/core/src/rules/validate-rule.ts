import type { AlgorithmTable } from '../algorithms/table.js'
import type { Algorithm, AlgorithmName } from '../algorithms/types.js'
import { isRateLimitError } from '../errors.js'
import { toMilliseconds } from './duration.js'
import { closest, type IssueSink, RuleValidationError } from './issues.js'
import type { Rule } from './types.js'
import { validateCosts } from './validate-costs.js'
import { isRecord, ownValue, typeName, validateMatch } from './validate-match.js'

/** The fields of a rule in code shape; a file rule is converted to these first. */
export type RuleFields = {
  readonly [K in
    | 'id'
    | 'description'
    | 'match'
    | 'algorithm'
    | 'rate'
    | 'period'
    | 'burst'
    | 'limit'
    | 'window'
    | 'cost'
    | 'costByRoute'
    | 'mode'
    | 'onStoreError'
    | 'onMissingIdentity']?: unknown
}

/** How each field was spelt in the user's input, for error messages. */
export type FieldLabels = Readonly<Record<keyof RuleFields, string>>

/** Marks a field that was present but invalid and has already been reported. */
export const REPORTED: unique symbol = Symbol('reported')

const RATE: readonly AlgorithmName[] = ['token_bucket', 'gcra', 'leaky_bucket']
const WINDOW: readonly AlgorithmName[] = ['fixed_window', 'sliding_log', 'sliding_window']
const ALIASES: Readonly<Record<string, AlgorithmName>> = { sliding_counter: 'sliding_window' }
// Pure (no spread, annotated calls), so a bundle that never validates a rule drops it.
const NO_NAMES: readonly string[] = []
const KNOWN_NAMES = /* @__PURE__ */ NO_NAMES.concat(
  RATE,
  WINDOW,
  /* @__PURE__ */ Object.keys(ALIASES),
)
const RATE_FIELDS = ['rate', 'period', 'burst'] as const
const WINDOW_FIELDS = ['limit', 'window'] as const
/** The factories' field names → ours. */
const FACTORY_FIELDS: Readonly<Record<string, keyof RuleFields>> = {
  rate: 'rate',
  periodMs: 'period',
  burst: 'burst',
  limit: 'limit',
  windowMs: 'window',
}
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * Validates one rule; returns the frozen model, or undefined after reporting to `issue`. Its
 * algorithm is compiled with `algorithms`, which must hold the one it names.
 */
export function validateRule(
  fields: RuleFields,
  labels: FieldLabels,
  issue: IssueSink,
  algorithms: AlgorithmTable,
) {
  let ok = true
  const fail: IssueSink = (field, problem) => {
    ok = false
    issue(field, problem)
  }
  const id = fields.id
  if (typeof id !== 'string' || !ID.test(id)) {
    fail(
      labels.id,
      `expected 1–64 letters, digits, ".", "_" or "-" (starting with a letter or digit), got ${typeName(id)}`,
    )
  }
  if (fields.description !== undefined && typeof fields.description !== 'string') {
    fail(labels.description, `expected a string, got ${typeName(fields.description)}`)
  }
  const match = validateMatch(fields.match, fail)
  const mode = oneOf(fields.mode, 'enforce', ['enforce', 'shadow'], labels.mode, fail)
  const onStoreError = oneOf(
    fields.onStoreError,
    'open',
    ['open', 'closed'],
    labels.onStoreError,
    fail,
  )
  const onMissingIdentity = oneOf(
    fields.onMissingIdentity,
    'ip',
    ['ip', 'deny'],
    labels.onMissingIdentity,
    fail,
  )
  const params = validateParams(fields, labels, fail, algorithms)
  const costs = validateCosts(
    fields.cost,
    fields.costByRoute,
    labels,
    params?.algorithm.limit,
    fail,
  )
  if (!ok || params === undefined || match === undefined || costs === undefined) return undefined
  const rule = {
    id,
    ...(fields.description === undefined ? {} : { description: fields.description }),
    match,
    ...params.model,
    mode,
    cost: costs.cost,
    costByRoute: costs.costByRoute,
    onStoreError,
    onMissingIdentity,
  } as Rule
  Object.defineProperty(rule, VALIDATED, { value: true })
  return deepFreeze(rule)
}

/**
 * Marks a rule this module validated (not enumerable: it is not part of the model). Registered
 * globally, so that a rule validated by one copy of the package (the ESM or the CJS build, the
 * rules-file entry) is recognised by the other.
 */
const VALIDATED: unique symbol = Symbol.for('tollgate.validated-rule') as never

/**
 * True for a rule that `validateRule` returned: taken as it is when given again (its durations
 * are whole ms, which a rule written in code may not use). A copy (`{ ...rule }`) is validated
 * anew.
 */
export function isValidatedRule(value: unknown): value is Rule {
  return isRecord(value) && Object.isFrozen(value) && Object.hasOwn(value, VALIDATED)
}

type Params = { readonly algorithm: Algorithm; readonly model: Record<string, unknown> }

function validateParams(
  fields: RuleFields,
  labels: FieldLabels,
  issue: IssueSink,
  algorithms: AlgorithmTable,
): Params | undefined {
  const given = fields.algorithm
  if (given === undefined) {
    issue(labels.algorithm, `required: one of ${KNOWN_NAMES.join(', ')}`)
    return undefined
  }
  const name = typeof given === 'string' ? (ownValue(ALIASES, given) ?? given) : given
  if (name === 'leaky_queue') {
    issue(
      labels.algorithm,
      'leaky_queue delays requests (shaping), which Tollgate does not do; use leaky_bucket, the meter that rejects instead',
    )
    return undefined
  }
  const isRate = RATE.includes(name as AlgorithmName)
  if (!isRate && !WINDOW.includes(name as AlgorithmName)) {
    const guess = typeof given === 'string' ? closest(given, KNOWN_NAMES) : undefined
    const hint =
      guess === undefined ? `one of ${KNOWN_NAMES.join(', ')}` : `did you mean "${guess}"?`
    issue(labels.algorithm, `unknown algorithm ${typeName(given)}; ${hint}`)
    return undefined
  }
  const family = isRate
    ? `a rate rule: ${labels.rate} + ${labels.burst}`
    : `a window rule: ${labels.limit} + ${labels.window}`
  const [wanted, unwanted] = isRate ? [RATE_FIELDS, WINDOW_FIELDS] : [WINDOW_FIELDS, RATE_FIELDS]
  let ok = true
  for (const field of unwanted) {
    if (fields[field] === undefined) continue
    ok = false
    issue(labels[field], `not used by ${name} (${family}); remove it`)
  }
  const values: ParamValues = {}
  for (const field of wanted) {
    const value = fields[field]
    if (value === REPORTED) ok = false
    else if (value === undefined) {
      if (field === 'period') values[field] = 1000
      else {
        ok = false
        issue(labels[field], `required by ${name} (${family})`)
      }
    } else {
      const checked =
        field === 'period' || field === 'window' ? toMilliseconds(value) : count(value)
      if (typeof checked === 'string') {
        ok = false
        issue(labels[field], checked)
      } else values[field] = checked
    }
  }
  if (!ok) return undefined
  const factory = ownValue(algorithms, name as AlgorithmName)
  if (factory === undefined) {
    issue(labels.algorithm, notGiven(name as AlgorithmName))
    return undefined
  }
  try {
    return {
      algorithm: build(factory, values),
      model: { algorithm: name, ...values },
    }
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    const field = ownValue(FACTORY_FIELDS, error.field ?? '') ?? 'algorithm'
    issue(labels[field], error.message.replace(/^\[tollgate\] [A-Za-z]+: /, ''))
    return undefined
  }
}

type ParamValues = {
  rate?: number
  period?: number
  burst?: number
  limit?: number
  window?: number
}

function build(factory: NonNullable<AlgorithmTable[AlgorithmName]>, v: ParamValues): Algorithm {
  return factory(
    // Each factory reads its own fields: a rate rule's, or a window rule's.
    'burst' in v
      ? ({ rate: v.rate!, periodMs: v.period!, burst: v.burst! } as never)
      : ({ limit: v.limit!, windowMs: v.window! } as never),
  )
}

function notGiven(name: AlgorithmName): string {
  return `${name} is not among the algorithms this limiter was given (the algorithms option: add ${name} to it)`
}

/**
 * Compiles a validated rule's algorithm with `algorithms`. Fails only for a rule validated
 * against another table (`defineRules` knows every algorithm) whose algorithm this one lacks.
 */
export function algorithmOf(rule: Rule, algorithms: AlgorithmTable): Algorithm {
  const factory = ownValue(algorithms, rule.algorithm)
  if (factory === undefined) {
    throw new RuleValidationError([
      { rule: rule.id, field: 'algorithm', problem: notGiven(rule.algorithm) },
    ])
  }
  return 'burst' in rule
    ? build(factory, { rate: rule.rate, period: rule.period, burst: rule.burst })
    : build(factory, { limit: rule.limit, window: rule.window })
}

function count(value: unknown): number | string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value
  return `expected a whole number ≥ 1, got ${typeName(value)}`
}

function oneOf<T extends string>(
  value: unknown,
  fallback: T,
  allowed: readonly T[],
  field: string,
  issue: IssueSink,
): T {
  if (value === undefined) return fallback
  if (allowed.includes(value as T)) return value as T
  issue(field, `expected ${allowed.map((a) => `"${a}"`).join(' or ')}, got ${typeName(value)}`)
  return fallback
}

function deepFreeze<T>(value: T): T {
  if (isRecord(value) || Array.isArray(value)) {
    for (const item of Object.values(value)) deepFreeze(item)
    Object.freeze(value)
  }
  return value
}
