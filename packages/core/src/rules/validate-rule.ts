import type { CalendarUnit } from '../algorithms/calendar.js'
import { CARRY_STRATEGIES, type CarryStrategy } from '../algorithms/carried-use.js'
import { DEFAULT_SETTLE_WITHIN_MS } from '../algorithms/reservable.js'
import type { ReadRuleFields } from '../algorithms/rule-fields.js'
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
/** Algorithms whose state cannot be split between processes while the store fails. */
const NO_FALLBACK: readonly AlgorithmName[] = ['concurrency', 'leaky_queue']
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
/** The queue's own knobs (nginx's `delay=`, `nodelay`), refused on every other algorithm. */
const QUEUE_FIELDS = ['delay', 'nodelay', 'maxWait'] as const
/** A concurrency rule's line of requests waiting for a slot, refused on every other algorithm. */
const SLOT_QUEUE_FIELDS = ['queue', 'queueOrder'] as const
const CONCURRENCY_FIELDS = ['limit'] as const
const PARAM_FIELDS = ['rate', 'period', 'burst', 'limit', 'window'] as const
/** The factories' field names → ours. */
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
  if (onStoreError === 'fallback' && NO_FALLBACK.includes(fields.algorithm as AlgorithmName)) {
    fail(
      labels.onStoreError,
      `'fallback' is for rate and window rules, not ${String(fields.algorithm)}: use 'open' or 'closed'`,
    )
  }
  const onMissingIdentity = oneOf(
    fields.onMissingIdentity,
    'ip',
    ['ip', 'deny'],
    labels.onMissingIdentity,
    fail,
  )
  const onChange = validateOnChange(fields.onChange, fields.algorithm, labels.onChange, fail)
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
  const settle = validateSettle(fields.settle, labels.settle, params?.algorithm, fail)
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
  algorithm: Algorithm | undefined,
  issue: IssueSink,
): number | undefined {
  if (value === undefined || value === false) return undefined
  const within = value === true ? DEFAULT_SETTLE_WITHIN_MS : toMilliseconds(value)
  if (typeof within === 'string') {
    issue(label, `expected true or a duration to settle within, such as '10m': ${within}`)
    return undefined
  }
  if (algorithm !== undefined && typeof algorithm.settle !== 'function') {
    const why =
      algorithm.name === 'leaky_queue'
        ? "a queued request's slot is fixed when it is admitted"
        : algorithm.name === 'concurrency'
          ? 'a concurrency slot is held until released, whatever the request costs'
          : 'the algorithm has no settle method'
    issue(label, `${algorithm.name} charges cannot be settled: ${why}; remove it`)
    return undefined
  }
  return within
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
  const isRate = RATE.includes(name as AlgorithmName)
  const isConcurrency = name === 'concurrency'
  if (!isRate && !isConcurrency && !WINDOW.includes(name as AlgorithmName)) {
    const guess = typeof given === 'string' ? closest(given, KNOWN_NAMES) : undefined
    const hint =
      guess === undefined ? `one of ${KNOWN_NAMES.join(', ')}` : `did you mean "${guess}"?`
    issue(labels.algorithm, `unknown algorithm ${typeName(given)}; ${hint}`)
    return undefined
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
  for (const field of PARAM_FIELDS) {
    if (wanted.includes(field) || fields[field] === undefined) continue
    ok = false
    issue(labels[field], `not used by ${name} (${family}); remove it`)
  }
  const values: ParamValues = {}
  const factory = ownValue(algorithms, name as AlgorithmName)
  // The fields only a queue or a concurrency rule takes are read by its algorithm (a bundle
  // without one holds none of their checks); without the algorithm, its absence is reported.
  const readOwn = () =>
    (factory as { ruleFields?: ReadRuleFields } | undefined)?.ruleFields?.(
      { fields, labels, issue, typeName, toMilliseconds, reported: REPORTED },
      values,
    ) ?? true
  if (name === 'leaky_queue') {
    if (!readOwn()) ok = false
  } else {
    for (const field of QUEUE_FIELDS) {
      if (fields[field] === undefined || (isConcurrency && field === 'maxWait')) continue
      ok = false
      issue(labels[field], `only for leaky_queue (a queue's own setting); remove it`)
    }
  }
  if (isConcurrency) {
    if (!readOwn()) ok = false
  } else {
    for (const field of SLOT_QUEUE_FIELDS) {
      if (fields[field] === undefined) continue
      ok = false
      issue(labels[field], `only for concurrency (requests waiting for a slot); remove it`)
    }
  }
  for (const field of wanted) {
    const value = fields[field]
    if (value === REPORTED) ok = false
    else if (value === undefined) {
      if (field === 'period') values[field] = 1000
      else {
        ok = false
        issue(labels[field], `required by ${name} (${family})`)
      }
    } else if (field === 'window' && isCalendarUnit(value)) {
      if (name === 'fixed_window') values.window = value
      else {
        ok = false
        issue(
          labels.window,
          `a calendar window (${JSON.stringify(value)}) is for fixed_window; ${name} needs a duration such as '30d'`,
        )
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
  if (!windowOptions(name as AlgorithmName, fields, labels, values, issue)) ok = false
  if (!ok) return undefined
  if (factory === undefined) {
    issue(labels.algorithm, notGiven(name as AlgorithmName))
    return undefined
  }
  try {
    const algorithm = build(factory, values)
    const calendar = algorithm.params?.kind === 'window' ? algorithm.params.calendar : undefined
    // The zone as the runtime names it ('europe/paris' is Europe/Paris).
    if (values.timeZone !== undefined && calendar !== undefined) values.timeZone = calendar.timeZone
    return { algorithm, model: { algorithm: name, ...values } }
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
  window?: number | CalendarUnit
  timeZone?: string
  buckets?: number
  delay?: number
  maxWait?: number
  queue?: number
  queueOrder?: 'fifo' | 'lifo'
}

// Here rather than beside the calendar code: validating a rule must not pull the time-zone code
// into a bundle whose algorithms hold no fixed window.
const CALENDAR_UNITS: readonly CalendarUnit[] = ['day', 'week', 'month', 'year']

function isCalendarUnit(value: unknown): value is CalendarUnit {
  return CALENDAR_UNITS.includes(value as CalendarUnit)
}

/**
 * The window rules' options: `timeZone` for a calendar fixed window, `buckets` for the sliding
 * window; anywhere else each is refused. False after reporting a problem.
 */
function windowOptions(
  name: AlgorithmName,
  fields: RuleFields,
  labels: FieldLabels,
  values: ParamValues,
  issue: IssueSink,
): boolean {
  let ok = true
  const { timeZone, buckets } = fields
  if (timeZone !== undefined) {
    if (name !== 'fixed_window' || !isCalendarUnit(values.window)) {
      ok = false
      issue(
        labels.timeZone,
        `a time zone applies to a calendar window: fixed_window with ${labels.window} day, week, month or year`,
      )
    } else if (typeof timeZone !== 'string') {
      ok = false
      issue(
        labels.timeZone,
        `expected an IANA time zone name such as "Europe/Paris", got ${typeName(timeZone)}`,
      )
    } else values.timeZone = timeZone
  }
  if (buckets !== undefined) {
    const checked = count(buckets)
    if (name !== 'sliding_window') {
      ok = false
      issue(labels.buckets, `sub-window counters are an option of sliding_window, not ${name}`)
    } else if (typeof checked === 'string') {
      ok = false
      issue(labels.buckets, checked)
    } else values.buckets = checked
  }
  return ok
}

function build(factory: NonNullable<AlgorithmTable[AlgorithmName]>, v: ParamValues): Algorithm {
  // Each factory reads its own fields: a rate rule's, or a window rule's (a calendar window's
  // unit and zone, the sliding window's buckets).
  if ('burst' in v) {
    // A queue rule's own fields besides (validated only for leaky_queue).
    const queue = v.delay === undefined ? {} : { delay: v.delay, maxWaitMs: v.maxWait }
    return factory({ rate: v.rate!, periodMs: v.period!, burst: v.burst!, ...queue } as never)
  }
  const zone = v.timeZone === undefined ? {} : { timeZone: v.timeZone }
  const buckets = v.buckets === undefined ? {} : { buckets: v.buckets }
  if (v.window === undefined) {
    // A concurrency rule: its limit, and the line its refused requests may wait in.
    const { limit, queue, maxWait, queueOrder } = v
    const line = queue ? { queue, maxWaitMs: maxWait, queueOrder } : {}
    return factory({ limit: limit!, ...line } as never)
  }
  return factory(
    (isCalendarUnit(v.window)
      ? { limit: v.limit!, calendar: v.window, ...zone }
      : { limit: v.limit!, windowMs: v.window!, ...buckets }) as never,
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
  if (rule.algorithm === 'leaky_queue') {
    const { rate, period, burst, delay, maxWait } = rule
    return build(factory, { rate, period, burst, delay, maxWait })
  }
  if ('burst' in rule)
    return build(factory, { rate: rule.rate, period: rule.period, burst: rule.burst })
  // A concurrency rule has a limit and no window, and perhaps a line to wait in.
  if (!('window' in rule)) {
    const { limit, queue, maxWait, queueOrder } = rule
    return build(factory, { limit, queue, maxWait, queueOrder })
  }
  return build(factory, {
    limit: rule.limit,
    window: rule.window,
    ...(rule.timeZone === undefined ? {} : { timeZone: rule.timeZone }),
    ...(rule.buckets === undefined ? {} : { buckets: rule.buckets }),
  })
}

function count(value: unknown): number | string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value
  return `expected a whole number ≥ 1, got ${typeName(value)}`
}

/**
 * A rule's `onChange`: how its keys' states carry over when `limiter.update` changes its figures.
 * A concurrency rule's state is the requests in flight, which always carry as they are.
 */
function validateOnChange(
  value: unknown,
  algorithm: unknown,
  label: string,
  issue: IssueSink,
): CarryStrategy | undefined {
  if (value === undefined) return undefined
  const strategy = oneOf(value, 'keep', CARRY_STRATEGIES, label, issue)
  if (algorithm === 'concurrency' && strategy !== 'keep') {
    issue(
      label,
      `a concurrency rule's requests in flight always carry over: use "keep" or remove it`,
    )
  }
  return strategy
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
