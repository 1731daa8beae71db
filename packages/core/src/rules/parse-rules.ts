import { BUILT_IN_ALGORITHMS } from '../algorithms/table.js'
import { shown } from '../options/option-values.js'
import { EVERY_READER } from './define-rules.js'
import { wholeMilliseconds } from './duration.js'
import type { IssueSink } from './issues.js'
import { RuleValidationError } from './issues.js'
import { type RuleShape, validateRuleSet } from './rule-set.js'
import type { Rule } from './types.js'
import { isRecord, unknownField } from './validate-match.js'
import { type FieldLabels, REPORTED, type RuleFields } from './validate-rule.js'

const LABELS = {
  id: 'id',
  description: 'description',
  match: 'match',
  algorithm: 'algorithm',
  rate: 'rate_per_s',
  period: 'period_s',
  burst: 'burst',
  delay: 'delay',
  nodelay: 'nodelay',
  maxWait: 'max_wait_s',
  queue: 'queue',
  queueOrder: 'queue_order',
  limit: 'limit',
  window: 'window_s',
  timeZone: 'time_zone',
  buckets: 'buckets',
  cost: 'cost',
  costByRoute: 'cost_by_route',
  mode: 'mode',
  onStoreError: 'on_store_error',
  onMissingIdentity: 'on_missing_identity',
  settle: 'settle',
  penalty: 'penalty',
  onChange: 'on_change',
  version: 'version',
} as const satisfies FieldLabels

const FILE_SHAPE: RuleShape = {
  // `period`, `window` and `max_wait` take a duration with its unit ('60s'), as in code.
  // Annotated pure, so a bundle that never reads a rules file drops it.
  fields: /* @__PURE__ */ Object.values<string>(LABELS).concat(
    'rate',
    'period',
    'window',
    'max_wait',
  ),
  hints: {
    costByRoute: 'cost_by_route',
    timeZone: 'time_zone',
    maxWait: 'max_wait_s',
    queueOrder: 'queue_order',
  },
  read: readFileRule,
}

/**
 * Validates rules in the file shape of the spec (snake_case: `rate_per_s`, `burst`, `limit`,
 * `window_s`, `cost_by_route`, ...), already parsed from JSON or YAML: a list of rules, or an
 * object `{ rules: [...] }`. Returns the same model as `defineRules`. To read YAML or JSON text,
 * use `loadRulesText` from `@tollgate/core/rules-file`; reading the file itself is up to the app
 * (the core uses no Node built-ins).
 * @example parseRules(JSON.parse(await readFile('rules.json', 'utf8')))
 */
export function parseRules(data: unknown): readonly Rule[] {
  if (isRecord(data)) {
    const extra = Object.keys(data).filter((key) => key !== 'rules')
    if (extra.length > 0 || !('rules' in data)) {
      throw new RuleValidationError(
        (extra.length > 0 ? extra : ['rules']).map((field) => ({
          field,
          problem:
            field === 'rules'
              ? 'expected a list of rules, or an object with a "rules" list'
              : unknownField(field, ['rules']),
        })),
      )
    }
    const rules = (data as { rules: unknown }).rules
    return validateRuleSet(rules, FILE_SHAPE, BUILT_IN_ALGORITHMS, EVERY_READER)
  }
  return validateRuleSet(data, FILE_SHAPE, BUILT_IN_ALGORITHMS, EVERY_READER)
}

/** A rule as read from a file, before validation. */
type FileRule = {
  readonly [K in
    | (typeof LABELS)[keyof typeof LABELS]
    | 'rate'
    | 'period'
    | 'window'
    | 'max_wait']?: unknown
}

/** Converts the file's fields to `RuleFields`: seconds to ms, rate_per_s to rate per second. */
function readFileRule(record: Record<string, unknown>, issue: IssueSink) {
  const raw = record as FileRule
  const labels: Record<keyof RuleFields, string> = { ...LABELS }
  const fields: Record<keyof RuleFields, unknown> = {
    id: raw.id,
    description: raw.description,
    match: raw.match,
    algorithm: raw.algorithm,
    rate: undefined,
    period: undefined,
    burst: raw.burst,
    delay: raw.delay,
    nodelay: raw.nodelay,
    maxWait: duration(raw, 'max_wait', labels, issue),
    queue: raw.queue,
    queueOrder: raw.queue_order,
    limit: raw.limit,
    window: duration(raw, 'window', labels, issue),
    timeZone: raw.time_zone,
    buckets: raw.buckets,
    cost: raw.cost,
    costByRoute: raw.cost_by_route,
    mode: raw.mode,
    onStoreError: raw.on_store_error,
    onMissingIdentity: raw.on_missing_identity,
    settle: raw.settle,
    penalty: raw.penalty,
    onChange: raw.on_change,
    version: raw.version,
  }
  const perSecond = raw.rate_per_s
  if (perSecond === undefined) {
    if (raw.rate !== undefined) labels.rate = 'rate'
    fields.rate = raw.rate
    fields.period = duration(raw, 'period', labels, issue)
  } else if (raw.rate !== undefined || raw.period_s !== undefined || raw.period !== undefined) {
    issue('rate_per_s', 'give rate_per_s, or rate with period_s, not both')
    fields.rate = REPORTED
  } else if (typeof perSecond === 'number' && perSecond > 0 && !Number.isInteger(perSecond)) {
    issue(
      'rate_per_s',
      `expected a whole number ≥ 1, got ${perSecond}; for a fractional rate write rate and period_s (0.5 per second: rate: 1, period_s: 2)`,
    )
    fields.rate = REPORTED
  } else {
    fields.rate = perSecond
  }
  return { fields, labels, file: true }
}

/**
 * `window_s` / `period_s` in seconds, or `window` / `period` with their unit ('60s'), checked
 * later like a rule in code; REPORTED after reporting both given at once.
 */
function duration(
  raw: FileRule,
  name: 'window' | 'period' | 'max_wait',
  labels: Record<keyof RuleFields, string>,
  issue: IssueSink,
): unknown {
  const inSeconds = `${name}_s` as const
  if (raw[name] === undefined) return seconds(raw[inSeconds], inSeconds, issue)
  labels[name === 'max_wait' ? 'maxWait' : name] = name
  if (raw[inSeconds] === undefined) return raw[name]
  issue(name, `give ${inSeconds} (seconds) or ${name} (with its unit, e.g. '60s'), not both`)
  return REPORTED
}

/** Seconds (a number > 0, whole ms) as a duration in ms; REPORTED after reporting anything else. */
function seconds(value: unknown, field: string, issue: IssueSink): unknown {
  if (value === undefined) return undefined
  const ms = typeof value === 'number' && value > 0 ? wholeMilliseconds(value * 1000) : undefined
  // With its unit, as a rule in code gives it.
  if (ms !== undefined && ms > 0) return `${ms}ms`
  issue(field, `expected a number of seconds > 0 (whole ms), got ${shown(value)}`)
  return REPORTED
}
