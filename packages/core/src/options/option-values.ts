import { RateLimitError } from '../errors.js'

/**
 * The checks every factory's options share. Each refusal is an `ERR_RL_INVALID_OPTION` naming
 * the option (`field`) and what it expects, read as `<where> <field>: expected …, got …`, so a
 * misconfiguration reads the same whichever factory refuses it. `where` names the factory when
 * its options could be mistaken for another's (`redisStore`); rules have their own errors
 * (`RuleValidationError`, `ERR_RL_INVALID_RULE`).
 */

/** The error for an option given a value it cannot take; `problem` says what was expected. */
export function invalidOption(field: string, problem: string, where?: string): RateLimitError {
  const label = where === undefined ? field : `${where} ${field}`
  return new RateLimitError('ERR_RL_INVALID_OPTION', `${label}: ${problem}`, { field })
}

/** `value` when it is one of `allowed`, else refused with the list. */
export function checkOneOf<T>(field: string, value: T, allowed: readonly T[], where?: string): T {
  if (allowed.includes(value)) return value
  throw invalidOption(
    field,
    `expected one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}, got ${shown(value)}`,
    where,
  )
}

/** Only a real boolean: `'false'` from a config file is truthy, and would turn a feature on. */
export function checkBoolean(field: string, value: unknown, where?: string): boolean {
  if (typeof value === 'boolean') return value
  throw invalidOption(field, `expected true or false, got ${shown(value)}`, where)
}

/** Bounds of a whole number; `unit` ('ms', 'bytes') is named in the message. */
export type WholeRange = {
  readonly min: number
  readonly max?: number | undefined
  readonly unit?: string | undefined
}

/**
 * A safe integer within `range` (inclusive), else refused naming the range: "a whole number of
 * ms from 1 to 10", "a whole number ≥ 1".
 */
export function checkWhole(
  field: string,
  value: unknown,
  range: WholeRange,
  where?: string,
): number {
  const { min, max, unit } = range
  if (Number.isSafeInteger(value) && (value as number) >= min) {
    if (max === undefined || (value as number) <= max) return value as number
  }
  const what = unit === undefined ? 'a whole number' : `a whole number of ${unit}`
  const bounds = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`
  throw invalidOption(field, `expected ${what} ${bounds}, got ${shown(value)}`, where)
}

/** A function, else refused naming the type given. */
export function checkFunction<F>(field: string, value: F, where?: string): F {
  if (typeof value === 'function') return value
  const type = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
  throw invalidOption(field, `expected a function, got ${type}`, where)
}

/**
 * An object with every method in `methods` (a clock's `now`, a store's `consume` and
 * `refund`), else refused with `shape`, how the object is written (`'{ now(): number }'`).
 */
export function checkMethods<T>(
  field: string,
  value: T,
  methods: readonly string[],
  shape: string,
  where?: string,
): NonNullable<T> {
  const object = value as Record<string, unknown>
  // Only an object or a function is its own `Object(...)`.
  if (Object(object) !== object) {
    throw invalidOption(field, `expected ${shape}, got ${shown(value)}`, where)
  }
  const missing = methods.filter((name) => typeof object[name] !== 'function')
  if (missing.length === 0) return value as NonNullable<T>
  // The object itself may be large (a client, a store): only what it lacks is shown.
  throw invalidOption(field, `expected ${shape}, got one without ${missing.join(' or ')}`, where)
}

/** A value as a message shows it; never throws (`JSON.stringify` does on a BigInt or a cycle). */
export function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'number') return String(value)
  try {
    // undefined (and a symbol) JSON leaves out: shown as String shows it.
    return JSON.stringify(value) ?? String(value)
  } catch {
    return 'an object JSON cannot show'
  }
}
