import { isCalendarUnit } from '../algorithms/calendar-unit.js'
import { CARRY_STRATEGIES } from '../algorithms/carried-use.js'
import { countProblem } from '../algorithms/params.js'
import type { OwnField, RuleFieldReader, RuleFieldValues } from '../algorithms/rule-fields.js'
import type { AlgorithmTable } from '../algorithms/table.js'
import type { Algorithm, AlgorithmName } from '../algorithms/types.js'
import { isRateLimitError } from '../errors.js'
import { oneOf, shown, whole } from '../options/option-values.js'
import { nearestOption } from '../options/unknown-options.js'
import { toMilliseconds } from './duration.js'
import { composedWithout, type IssueSink, RuleValidationError } from './issues.js'
import type { Rule } from './types.js'
import { validateCosts } from './validate-costs.js'
import { definedOnly, ownValue, validateMatch } from './validate-match.js'
import type { PenaltyReader } from './validate-penalty.js'
import type { RouteReader } from './validate-routes.js'
import type { SettleReader } from './validate-settle.js'

/**
 * The fields an algorithm's factory takes, each as the parameter of its name (a duration in ms
 * as `<name>Ms`, a calendar window as `calendar`): the rate's and the window's, and those only
 * some algorithms take (their factories' readers read them; any other algorithm refuses them).
 */
const FACTORY_FIELDS = [
  'rate',
  'period',
  'burst',
  'delay',
  'nodelay',
  'maxWait',
  'queue',
  'queueOrder',
  'limit',
  'window',
  'timeZone',
  'buckets',
] as const

/** Every field of a rule in code shape, in the order the list of known fields names them. */
export const RULE_FIELDS = [
  'id',
  'description',
  'match',
  'algorithm',
  ...FACTORY_FIELDS,
  'cost',
  'costByRoute',
  'mode',
  'onStoreError',
  'onMissingIdentity',
  'settle',
  'penalty',
  'onChange',
  'version',
] as const

/** The fields of a rule in code shape; a file rule is converted to these first. */
export type RuleFields = { readonly [K in (typeof RULE_FIELDS)[number]]?: unknown }

/** How each field was spelt in the user's input, for error messages. */
export type FieldLabels = Readonly<Record<keyof RuleFields, string>>

/**
 * What reads the rule fields only some limiters take, from their parts (a `LimiterParts` is
 * one): route matching reads routes (`ROUTES`), the penalties part a `penalty`, the reservations part a
 * `settle`. A limiter composed without penalties refuses every penalty here; one without
 * reservations refuses a rule that settles once its rules are compiled, naming the part.
 */
export type RuleReaders = {
  readonly routes: RouteReader
  readonly penalties?: { readonly validate: PenaltyReader } | undefined
  readonly reservations?: { readonly validateSettle: SettleReader } | undefined
}

/** Marks a field that was present but invalid and has already been reported. */
export const REPORTED: unique symbol = Symbol('reported')

/** The parameter fields, those each algorithm takes (its family's). */
type ParamField = 'rate' | 'period' | 'burst' | 'limit' | 'window'
const RATE: readonly ParamField[] = ['rate', 'period', 'burst']
const WINDOW: readonly ParamField[] = ['limit', 'window']
/** Each algorithm a rule may name, with its parameter fields. */
const FAMILIES: Readonly<Record<string, readonly ParamField[]>> = {
  token_bucket: RATE,
  gcra: RATE,
  leaky_bucket: RATE,
  leaky_queue: RATE,
  fixed_window: WINDOW,
  sliding_log: WINDOW,
  sliding_window: WINDOW,
  concurrency: ['limit'],
}
/** The other name of an algorithm: a sliding window's counters. */
const ALIAS = 'sliding_counter'
// Pure (an annotated call), so a bundle that never validates a rule drops it.
const KNOWN_NAMES = /* @__PURE__ */ Object.keys(FAMILIES).concat(ALIAS)
/** The fields a rule chooses a value of, each with its choices, the default first. */
const CHOICES = {
  mode: ['enforce', 'shadow'],
  onStoreError: ['open', 'closed', 'fallback'],
  onMissingIdentity: ['ip', 'deny'],
  // No default: a rule that names none carries its algorithm's.
  onChange: CARRY_STRATEGIES,
} as const
const DURATIONS: readonly string[] = ['period', 'window', 'maxWait']
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * Validates one rule, reporting every problem to `issue`; returns the frozen model, or undefined
 * when it could not be read. Its algorithm is compiled with `algorithms`, which must hold the one
 * it names; the fields only some limiters take are read by `readers`.
 */
export function validateRule(
  fields: RuleFields,
  labels: FieldLabels,
  issue: IssueSink,
  algorithms: AlgorithmTable,
  readers: RuleReaders,
  file = false,
) {
  let ok = true
  const fail: IssueSink = (field, problem) => {
    ok = false
    issue(field, problem)
  }
  const { id, description, version } = fields
  if (typeof id !== 'string' || !ID.test(id)) {
    // The pattern itself: 1–64 letters, digits, '.', '_' or '-', first a letter or digit.
    fail(labels.id, `expected an id matching ${ID}, got ${shown(id)}`)
  }
  if (description !== undefined && typeof description !== 'string')
    fail(labels.description, `expected a string, got ${shown(description)}`)
  const { routes } = readers
  const match = validateMatch(fields.match, fail, fields.algorithm === 'concurrency', routes)
  const chosen: { -readonly [K in keyof typeof CHOICES]?: unknown } = {}
  for (const [field, choices] of Object.entries(CHOICES) as [
    keyof typeof CHOICES,
    readonly string[],
  ][]) {
    const value = fields[field]
    // Refused as an option of one of these values is.
    const problem = value === undefined ? undefined : oneOf(choices)(value)
    chosen[field] =
      problem === undefined
        ? (value ?? (field === 'onChange' ? value : choices[0]))
        : fail(labels[field], problem)
  }
  // A whole number ≥ 0, as a cost is (a Redis script keeps it exactly, as every number).
  const versionProblem = version === undefined ? undefined : whole({ min: 0 })(version)
  if (versionProblem !== undefined) fail(labels.version, versionProblem)
  const params = validateParams(fields, labels, fail, algorithms)
  const costs = validateCosts(fields, labels, params?.algorithm.limit, fail, routes)
  // Without the reservations part, a rule that settles is refused once compiled, naming it.
  const settle =
    readers.reservations?.validateSettle(fields.settle, labels.settle, params, fail) ??
    (fields.settle === false ? undefined : fields.settle)
  // A penalty is read by the limiter's penalties part, and refused by a limiter without one.
  const penalty =
    fields.penalty === undefined
      ? undefined
      : readers.penalties
        ? readers.penalties.validate(fields.penalty, labels.penalty, file, fields, fail)
        : fail(labels.penalty, composedWithout('penalties'))
  // No match only once a problem was reported (`ok` is then false); no params also when a
  // field was reported by the rule's reader (REPORTED).
  if (!ok || params === undefined) return undefined
  // In the order a rule is written; what is not given is left out.
  const rule: Record<string, unknown> = {
    id,
    description,
    match,
    ...params.model,
    mode: chosen.mode,
    ...costs,
    onStoreError: chosen.onStoreError,
    onMissingIdentity: chosen.onMissingIdentity,
    settle,
    penalty,
    onChange: chosen.onChange,
    version,
  }
  Object.defineProperty(definedOnly(rule), VALIDATED, { value: true })
  return deepFreeze(rule as Rule)
}

/**
 * Marks a rule this module validated (not enumerable: it is not part of the model). Registered
 * globally, so that a rule validated by one copy of the package (the ESM or the CJS build, the
 * rules-file entry) is recognised by the other.
 */
const VALIDATED: unique symbol = Symbol.for('tollgate.validated-rule') as never

/**
 * True for a record that `validateRule` returned: taken as it is when given again (its durations
 * are whole ms, which a rule written in code may not use). A copy (`{ ...rule }`) is validated
 * anew.
 */
export function isValidatedRule(value: Record<string, unknown>): value is Rule {
  return Object.hasOwn(value, VALIDATED)
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
  const name = (given === ALIAS ? 'sliding_window' : given) as AlgorithmName
  const wanted = ownValue(FAMILIES, name)
  const factory = ownValue(algorithms, name)
  if (wanted === undefined || factory === undefined) {
    // Missing or unknown, with the closest name (the known ones when none is close).
    const hint = nearestOption(typeof given === 'string' ? given : '', KNOWN_NAMES, 'algorithm')
    issue(
      labels.algorithm,
      wanted === undefined
        ? `${given === undefined ? 'required' : `unknown algorithm ${shown(given)}`}; ${hint}`
        : `${name} is not in the algorithms option: add it`,
    )
    return undefined
  }
  // The fields only some algorithms take are read by the reader their factory carries (a bundle
  // without the algorithm holds none of their checks), and refused on every other algorithm.
  const reader = (factory as { ruleFields?: RuleFieldReader }).ruleFields
  if (fields.onStoreError === 'fallback' && reader?.noFallback) {
    issue(labels.onStoreError, reader.noFallback(name))
  }
  let ok = true
  // Gives undefined: a field refused holds no value.
  const fail = (field: string, problem: string): undefined => {
    ok = false
    issue(field, problem)
  }
  const values: RuleFieldValues & { [K in ParamField]?: number | string } = {}
  // Each field a factory takes: the algorithm's parameters read here, the fields of its own left
  // to its reader, any other refused.
  for (const field of FACTORY_FIELDS as readonly (ParamField | OwnField)[]) {
    const value = fields[field]
    if (!wanted.includes(field as ParamField)) {
      if (value !== undefined && !reader?.takes.includes(field as OwnField)) {
        fail(labels[field], `not used by ${name}`)
      }
    } else if (value === REPORTED) ok = false
    else if (value === undefined) {
      values[field as ParamField] =
        field === 'period' ? 1000 : fail(labels[field], `required by ${name}`)
    } else if (field === 'window' && name === 'fixed_window' && isCalendarUnit(value)) {
      values.window = value
    } else {
      const checked =
        field === 'period' || field === 'window'
          ? toMilliseconds(value)
          : (countProblem(value) ?? (value as number))
      values[field as ParamField] =
        typeof checked === 'string' ? fail(labels[field], checked) : checked
    }
  }
  // An algorithm with fields of its own reads them: the access it is handed is made only then.
  if (
    reader !== undefined &&
    !reader.read({ fields, labels, issue: fail, toMilliseconds, reported: REPORTED }, values)
  ) {
    ok = false
  }
  if (!ok) return undefined
  try {
    const algorithm = build(factory, values)
    return { algorithm, reader, model: { algorithm: name, ...values } }
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    // A factory names its parameter (`periodMs`, `calendar`); one no rule field holds (a
    // fixed window's `anchor`), the algorithm.
    const field = error.field?.replace(/Ms$/, '').replace('calendar', 'window')
    issue(labels[field as ParamField] ?? labels.algorithm, error.message.replace(/^\S+ \w+: /, ''))
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
  for (const field of FACTORY_FIELDS) {
    const value = model[field]
    if (value === undefined) continue
    // A window is a calendar unit (a string) or a duration in ms.
    const calendar = field === 'window' && isCalendarUnit(value)
    params[calendar ? 'calendar' : DURATIONS.includes(field) ? `${field}Ms` : field] = value
  }
  return factory(params as never)
}

/**
 * Compiles a validated rule's algorithm with `algorithms`. Fails only for a rule validated
 * against another table (`defineRules` knows every algorithm) whose algorithm this one lacks.
 */
export function algorithmOf(rule: Rule, algorithms: AlgorithmTable): Algorithm {
  const factory = ownValue(algorithms, rule.algorithm)
  if (factory === undefined) {
    throw new RuleValidationError([
      {
        rule: rule.id,
        field: 'algorithm',
        problem: `${rule.algorithm} is not in the algorithms option: add it`,
      },
    ])
  }
  return build(factory, rule)
}

function deepFreeze<T>(value: T): T {
  // Records and lists alike (isRecord or Array.isArray): every object but null.
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item)
    Object.freeze(value)
  }
  return value
}
