import { isCalendarUnit } from '../algorithms/calendar-unit.js'
import { CARRY_STRATEGIES, type CarryStrategy } from '../algorithms/carried-use.js'
import { DEFAULT_SETTLE_WITHIN_MS } from '../algorithms/reservable.js'
import type { OwnField, RuleFieldReader, RuleFieldValues } from '../algorithms/rule-fields.js'
import type { AlgorithmTable } from '../algorithms/table.js'
import type { Algorithm, AlgorithmName } from '../algorithms/types.js'
import { closest } from '../closest-name.js'
import { isRateLimitError } from '../errors.js'
import { toMilliseconds } from './duration.js'
import { type IssueSink, RuleValidationError } from './issues.js'
import type { RouteParser } from './route.js'
import type { Rule } from './types.js'
import { costProblem, validateCosts } from './validate-costs.js'
import { isRecord, ownValue, typeName, validateMatch } from './validate-match.js'
import type { PenaltyReader } from './validate-penalty.js'

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
    | 'delay'
    | 'nodelay'
    | 'maxWait'
    | 'queue'
    | 'queueOrder'
    | 'limit'
    | 'window'
    | 'timeZone'
    | 'buckets'
    | 'cost'
    | 'costByRoute'
    | 'mode'
    | 'onStoreError'
    | 'onMissingIdentity'
    | 'settle'
    | 'penalty'
    | 'onChange'
    | 'version']?: unknown
}

/** How each field was spelt in the user's input, for error messages. */
export type FieldLabels = Readonly<Record<keyof RuleFields, string>>

/** Marks a field that was present but invalid and has already been reported. */
export const REPORTED: unique symbol = Symbol('reported')

const RATE: readonly AlgorithmName[] = ['token_bucket', 'gcra', 'leaky_bucket', 'leaky_queue']
const WINDOW: readonly AlgorithmName[] = ['fixed_window', 'sliding_log', 'sliding_window']
const ALIASES: Readonly<Record<string, AlgorithmName>> = { sliding_counter: 'sliding_window' }
// Pure (no spread, annotated calls), so a bundle that never validates a rule drops it.
const NO_NAMES: readonly string[] = []
const KNOWN_NAMES = /* @__PURE__ */ NO_NAMES.concat(
  RATE,
  WINDOW,
  'concurrency',
  /* @__PURE__ */ Object.keys(ALIASES),
)
const RATE_FIELDS = ['rate', 'period', 'burst'] as const
const WINDOW_FIELDS = ['limit', 'window'] as const
const CONCURRENCY_FIELDS = ['limit'] as const
const PARAM_FIELDS = ['rate', 'period', 'burst', 'limit', 'window'] as const
const QUEUE_ONLY = "only for leaky_queue (a queue's own setting); remove it"
const SLOT_QUEUE_ONLY = 'only for concurrency (requests waiting for a slot); remove it'
/**
 * The fields only some algorithms take (their factories' readers read them), and what a rule of
 * any other algorithm is told: `name` is its algorithm, `window` the window field's label.
 */
const OWN_FIELDS: Readonly<Record<OwnField, (name: string, window: string) => string>> = {
  delay: () => QUEUE_ONLY,
  nodelay: () => QUEUE_ONLY,
  maxWait: () => QUEUE_ONLY,
  queue: () => SLOT_QUEUE_ONLY,
  queueOrder: () => SLOT_QUEUE_ONLY,
  timeZone: (_, window) =>
    `a time zone applies to a calendar window: fixed_window with ${window} day, week, month or year`,
  buckets: (name) => `sub-window counters are an option of sliding_window, not ${name}`,
}
/** The factories' parameter names → the rule model's fields. */
const FACTORY_FIELDS: Readonly<Record<string, keyof RuleFields>> = {
  rate: 'rate',
  periodMs: 'period',
  burst: 'burst',
  limit: 'limit',
  windowMs: 'window',
  calendar: 'window',
  timeZone: 'timeZone',
  buckets: 'buckets',
  delay: 'delay',
  maxWaitMs: 'maxWait',
  queue: 'queue',
  queueOrder: 'queueOrder',
}
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * Validates one rule; returns the frozen model, or undefined after reporting to `issue`. Its
 * algorithm is compiled with `algorithms`, which must hold the one it names; its routes are
 * read with `parseRoute`.
 */
export function validateRule(
  fields: RuleFields,
  labels: FieldLabels,
  issue: IssueSink,
  algorithms: AlgorithmTable,
  parseRoute: RouteParser,
  penaltyOf: PenaltyReader | undefined,
  file = false,
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
  const match = validateMatch(fields.match, fail, fields.algorithm === 'concurrency', parseRoute)
  const mode = oneOf(fields.mode, 'enforce', ['enforce', 'shadow'], labels.mode, fail)
  const onStoreError = oneOf(
    fields.onStoreError,
    'open',
    ['open', 'closed', 'fallback'],
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
  const onChange = validateOnChange(fields.onChange, labels.onChange, fail)
  // A whole number ≥ 0, as a cost is (a Redis script keeps it exactly, as every number).
  const version = fields.version
  const versionProblem = version === undefined ? undefined : costProblem(version, undefined)
  if (versionProblem !== undefined) fail(labels.version, versionProblem)
  const params = validateParams(fields, labels, fail, algorithms)
  const costs = validateCosts(
    fields.cost,
    fields.costByRoute,
    labels,
    params?.algorithm.limit,
    fail,
    parseRoute,
  )
  const settle = validateSettle(fields.settle, labels.settle, params, fail)
  const penaltyContext = { shadow: mode === 'shadow', algorithm: fields.algorithm }
  const penalty = readPenalty(fields.penalty, labels.penalty, penaltyOf, file, penaltyContext, fail)
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
    ...(settle === undefined ? {} : { settle }),
    ...(penalty === undefined ? {} : { penalty }),
    ...(onChange === undefined ? {} : { onChange }),
    ...(version === undefined ? {} : { version }),
  } as Rule
  Object.defineProperty(rule, VALIDATED, { value: true })
  return deepFreeze(rule)
}

/** A rule's penalty, read by the limiter's penalty part; refused by a limiter without one. */
function readPenalty(
  value: unknown,
  label: string,
  penaltyOf: PenaltyReader | undefined,
  file: boolean,
  context: Parameters<PenaltyReader>[3],
  issue: IssueSink,
) {
  if (value === undefined) return undefined
  if (penaltyOf !== undefined) return penaltyOf(value, label, file, context, issue)
  issue(
    label,
    "this limiter was composed without penalties: add penalties to createRateLimit's parts",
  )
  return undefined
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

/**
 * A rule's `settle`: `true` for the default time to settle, a duration for its own, `false` or
 * nothing for a final charge. Refused on an algorithm whose charge cannot be settled.
 */
function validateSettle(
  value: unknown,
  label: string,
  params: Params | undefined,
  issue: IssueSink,
): number | undefined {
  if (value === undefined || value === false) return undefined
  const within = value === true ? DEFAULT_SETTLE_WITHIN_MS : toMilliseconds(value)
  if (typeof within === 'string') {
    issue(label, `expected true or a duration to settle within, such as '10m': ${within}`)
    return undefined
  }
  if (params !== undefined && typeof params.algorithm.settle !== 'function') {
    const why = params.reader?.unsettled ?? 'the algorithm has no settle method'
    issue(label, `${params.algorithm.name} charges cannot be settled: ${why}; remove it`)
    return undefined
  }
  return within
}

type Params = {
  readonly algorithm: Algorithm
  readonly reader: RuleFieldReader | undefined
  readonly model: Record<string, unknown>
}

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
  const name = (
    typeof given === 'string' ? (ownValue(ALIASES, given) ?? given) : given
  ) as AlgorithmName
  const isRate = RATE.includes(name)
  const isConcurrency = name === 'concurrency'
  if (!isRate && !isConcurrency && !WINDOW.includes(name)) {
    const guess = typeof given === 'string' ? closest(given, KNOWN_NAMES) : undefined
    const hint =
      guess === undefined ? `one of ${KNOWN_NAMES.join(', ')}` : `did you mean "${guess}"?`
    issue(labels.algorithm, `unknown algorithm ${typeName(given)}; ${hint}`)
    return undefined
  }
  const factory = ownValue(algorithms, name)
  if (factory === undefined) {
    issue(labels.algorithm, notGiven(name))
    return undefined
  }
  // The fields only some algorithms take are read by the reader their factory carries (a bundle
  // without the algorithm holds none of their checks), and refused on every other algorithm.
  const reader = (factory as { ruleFields?: RuleFieldReader }).ruleFields
  if (fields.onStoreError === 'fallback' && reader?.noFallback) {
    issue(labels.onStoreError, reader.noFallback(name))
  }
  const family = isRate
    ? `a rate rule: ${labels.rate} + ${labels.burst}`
    : isConcurrency
      ? `a concurrency rule: ${labels.limit}`
      : `a window rule: ${labels.limit} + ${labels.window}`
  const wanted: readonly (typeof PARAM_FIELDS)[number][] = isRate
    ? RATE_FIELDS
    : isConcurrency
      ? CONCURRENCY_FIELDS
      : WINDOW_FIELDS
  let ok = true
  const fail: IssueSink = (field, problem) => {
    ok = false
    issue(field, problem)
  }
  for (const field of PARAM_FIELDS) {
    if (!wanted.includes(field) && fields[field] !== undefined) {
      fail(labels[field], `not used by ${name} (${family}); remove it`)
    }
  }
  const refuse = (field: OwnField) => fail(labels[field], OWN_FIELDS[field](name, labels.window))
  for (const field of Object.keys(OWN_FIELDS) as OwnField[]) {
    if (fields[field] !== undefined && !reader?.takes.includes(field)) refuse(field)
  }
  const values: RuleFieldValues & { [K in (typeof PARAM_FIELDS)[number]]?: number | string } = {}
  const access = {
    fields,
    labels,
    issue: fail,
    refuse,
    typeName,
    toMilliseconds,
    reported: REPORTED,
  }
  for (const field of wanted) {
    const value = fields[field]
    if (value === REPORTED) ok = false
    else if (value === undefined) {
      if (field === 'period') values[field] = 1000
      else fail(labels[field], `required by ${name} (${family})`)
    } else if (field === 'window' && isCalendarUnit(value)) {
      if (name === 'fixed_window') values.window = value
      else
        fail(
          labels.window,
          `a calendar window (${JSON.stringify(value)}) is for fixed_window; ${name} needs a duration such as '30d'`,
        )
    } else {
      const checked =
        field === 'period' || field === 'window' ? toMilliseconds(value) : count(value)
      if (typeof checked === 'string') fail(labels[field], checked)
      else values[field] = checked
    }
  }
  if (reader !== undefined && !reader.read(access, values)) ok = false
  if (!ok) return undefined
  try {
    const algorithm = build(factory, values)
    const calendar = algorithm.params?.kind === 'window' ? algorithm.params.calendar : undefined
    // The zone as the runtime names it ('europe/paris' is Europe/Paris).
    if (values.timeZone !== undefined && calendar !== undefined) values.timeZone = calendar.timeZone
    return { algorithm, reader, model: { algorithm: name, ...values } }
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    const field = ownValue(FACTORY_FIELDS, error.field ?? '') ?? 'algorithm'
    issue(labels[field], error.message.replace(/^\[tollgate\] [A-Za-z]+: /, ''))
    return undefined
  }
}

/**
 * The algorithm of a rule model's fields (each factory takes those of its own: a rate rule's, a
 * window rule's with a calendar unit or a window in ms, a queue's or a concurrency rule's
 * besides).
 */
function build(
  factory: NonNullable<AlgorithmTable[AlgorithmName]>,
  model: Readonly<Record<string, unknown>>,
): Algorithm {
  const params: Record<string, unknown> = {}
  for (const [param, field] of Object.entries(FACTORY_FIELDS)) {
    const value = model[field]
    // A window is a calendar unit (a string) or a duration in ms.
    if (
      value !== undefined &&
      (field !== 'window' || (param === 'calendar') === isCalendarUnit(value))
    ) {
      params[param] = value
    }
  }
  return factory(params as never)
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
  return build(factory, rule)
}

function count(value: unknown): number | string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value
  return `expected a whole number ≥ 1, got ${typeName(value)}`
}

/**
 * A rule's `onChange`: how its keys' states carry over when `limiter.update` changes its figures
 * (a concurrency rule's reader refuses all but `keep`).
 */
function validateOnChange(
  value: unknown,
  label: string,
  issue: IssueSink,
): CarryStrategy | undefined {
  return value === undefined ? undefined : oneOf(value, 'keep', CARRY_STRATEGIES, label, issue)
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
