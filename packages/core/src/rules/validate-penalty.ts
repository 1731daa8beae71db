import { shown } from '../options/option-values.js'
import { toMilliseconds } from './duration.js'
import type { IssueSink } from './issues.js'
import type { PenaltyRule } from './types.js'
import { isRecord, refuseUnknownFields } from './validate-match.js'

/** How a penalty's own fields are spelt: camelCase in code, snake_case in rules files. */
type PenaltyNames = {
  readonly block: string
  readonly factor: string
  readonly maxBlock: string
  readonly forgetAfter: string
  readonly forbidAfter: string
}

const CODE_PENALTY_NAMES: PenaltyNames = {
  block: 'block',
  factor: 'factor',
  maxBlock: 'maxBlock',
  forgetAfter: 'forgetAfter',
  forbidAfter: 'forbidAfter',
}

const FILE_PENALTY_NAMES: PenaltyNames = {
  block: 'block',
  factor: 'factor',
  maxBlock: 'max_block',
  forgetAfter: 'forget_after',
  forbidAfter: 'forbid_after',
}

const DAY_MS = 86_400_000
/** A factor beyond this reaches any cap within a few offences; larger ones are typos. */
const MAX_FACTOR = 1000
/** A year: a block or a memory longer than this is a mistake (and would near `MAX_TIME_MS`). */
const MAX_SPAN_MS = 365 * DAY_MS

/** Reads a rule's `penalty` (see `validatePenalty`): a part of the limiter, for rules that have one. */
export type PenaltyReader = typeof validatePenalty

/**
 * A rule's `penalty`, validated into whole ms; undefined when absent or after reporting to
 * `issue` (each problem under `<label>.<field>`, a misspelt field with the nearest name), its
 * fields spelt as a rules file spells them when `file`.
 * `shadow` and `concurrency` rules take none: a shadow rule never denies, and a concurrency
 * refusal ends when a slot frees, whatever the client did.
 */
export function validatePenalty(
  value: unknown,
  label: string,
  file: boolean,
  rule: { readonly mode?: unknown; readonly algorithm?: unknown },
  issue: IssueSink,
): PenaltyRule | undefined {
  if (value === undefined) return undefined
  const names = file ? FILE_PENALTY_NAMES : CODE_PENALTY_NAMES
  if (!isRecord(value)) {
    issue(
      label,
      `expected an object such as { ${names.block}: '1m', ${names.factor}: 2, ${names.maxBlock}: '1h' }, got ${shown(value)}`,
    )
    return undefined
  }
  let ok = true
  const fail = (field: string, problem: string) => {
    ok = false
    issue(`${label}.${field}`, problem)
  }
  const known = Object.values(names)
  refuseUnknownFields(value, known, fail)
  if (rule.mode === 'shadow') {
    ok = false
    issue(label, 'a shadow rule never denies, so it never penalises: remove penalty or mode')
  }
  if (rule.algorithm === 'concurrency') {
    ok = false
    issue(label, 'a concurrency refusal ends when a slot frees, whatever the client did; remove it')
  }
  const span = (field: keyof PenaltyNames, fallback: number | undefined): number => {
    const given = value[names[field]]
    if (given === undefined) {
      if (fallback === undefined) fail(names[field], "required: a duration such as '1m'")
      return fallback ?? 0
    }
    const ms = toMilliseconds(given)
    if (typeof ms === 'string') fail(names[field], ms)
    else if (ms > MAX_SPAN_MS) fail(names[field], `at most a year (365d), got ${shown(given)}`)
    return typeof ms === 'number' ? ms : 0
  }
  const whole = (field: keyof PenaltyNames, max: number): number | undefined => {
    const given = value[names[field]]
    if (given === undefined) return undefined
    if (Number.isSafeInteger(given) && (given as number) >= 1 && (given as number) <= max) {
      return given as number
    }
    fail(names[field], `expected a whole number from 1 to ${max}, got ${shown(given)}`)
    return undefined
  }
  const block = span('block', undefined)
  const factor = whole('factor', MAX_FACTOR) ?? 2
  const maxBlock = span('maxBlock', Math.max(block, DAY_MS))
  const forgetAfter = span('forgetAfter', DAY_MS)
  const forbidAfter = whole('forbidAfter', Number.MAX_SAFE_INTEGER)
  if (ok && maxBlock < block) {
    fail(names.maxBlock, `shorter than ${names.block} (${maxBlock} ms < ${block} ms)`)
  }
  if (!ok) return undefined
  return {
    block,
    factor,
    maxBlock,
    forgetAfter,
    ...(forbidAfter === undefined ? {} : { forbidAfter }),
  } as PenaltyRule
}
