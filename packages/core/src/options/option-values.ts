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

/**
 * What an option accepts, as a check of its value: what was expected and what was given
 * (`expected true or false, got "yes"`) when the value is not one it accepts, else undefined.
 * Each option's kind is declared once, in its factory's table (`LIMITER_KINDS`,
 * `RESPONDER_KINDS`, `CLIENT_IP_KINDS`, the adapter's `OWN_OPTIONS`), and checked by
 * `checkOptionValues`, so that the modules using an option only read it.
 */
export type OptionKind = (value: unknown) => string | undefined

/** `value` when `kind` accepts it, else refused with what was expected. */
export function checkValue<T>(field: string, value: T, kind: OptionKind, where?: string): T {
  const problem = kind(value)
  if (problem !== undefined) throw invalidOption(field, problem, where)
  return value
}

/**
 * Checks every option of `kinds` that `options` gives (`undefined` counts as not given; a kind
 * of 0 is checked elsewhere, or not at all), in the table's order: the first refused is thrown.
 */
export function checkOptionValues(
  options: object,
  kinds: Readonly<Record<string, OptionKind | 0>>,
): void {
  for (const name in kinds) {
    const value = (options as Record<string, unknown>)[name]
    const kind = kinds[name]
    if (value !== undefined && kind) checkValue(name, value, kind)
  }
}

/** One of `allowed`. */
/* @__NO_SIDE_EFFECTS__ */
export function oneOf(allowed: readonly unknown[]): OptionKind {
  return (value) =>
    allowed.includes(value)
      ? undefined
      : `expected one of ${allowed.map(shown).join(', ')}, got ${shown(value)}`
}

/** Only a real boolean: `'false'` from a config file is truthy, and would turn a feature on. */
export const BOOLEAN: OptionKind = (value) =>
  typeof value === 'boolean' ? undefined : `expected true or false, got ${shown(value)}`

/** Bounds of a whole number; `unit` ('ms', 'bytes') is named in the message. */
export type WholeRange = {
  readonly min: number
  readonly max?: number | undefined
  readonly unit?: string | undefined
}

/**
 * A safe integer within `range` (inclusive); the message names the range: "a whole number of
 * ms from 1 to 10", "a whole number ≥ 1".
 */
/* @__NO_SIDE_EFFECTS__ */
export function whole({ min, max, unit }: WholeRange): OptionKind {
  return (value) => {
    if (Number.isSafeInteger(value) && (value as number) >= min) {
      if (max === undefined || (value as number) <= max) return undefined
    }
    const of = unit === undefined ? '' : ` of ${unit}`
    const bounds = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`
    return `expected a whole number${of} ${bounds}, got ${shown(value)}`
  }
}

/** A function. */
export const FUNCTION: OptionKind = (value) =>
  typeof value === 'function' ? undefined : `expected a function, got ${shown(value)}`

/**
 * An object with every method in `methods` (a clock's `now`, a store's `consume` and
 * `refund`); `shape` is how the object is written (`'{ now(): number }'`).
 */
/* @__NO_SIDE_EFFECTS__ */
export function methods(names: readonly string[], shape: string): OptionKind {
  return (value) => {
    const object = value as Record<string, unknown>
    // Only an object or a function is its own `Object(...)`.
    if (Object(object) !== object) return `expected ${shape}, got ${shown(value)}`
    const missing = names.filter((name) => typeof object[name] !== 'function')
    // The object itself may be large (a client, a store): only what it lacks is shown.
    return missing.length === 0
      ? undefined
      : `expected ${shape}, got one without ${missing.join(' or ')}`
  }
}

/** `kind`, or null, which the option reads as its default (`options.legacyHeaders ?? false`). */
/* @__NO_SIDE_EFFECTS__ */
export function orNull(kind: OptionKind): OptionKind {
  return (value) => (value === null ? undefined : kind(value))
}

/** `value` when it is one of `allowed`, else refused with the list. */
export function checkOneOf<T>(field: string, value: T, allowed: readonly T[], where?: string): T {
  return checkValue(field, value, oneOf(allowed), where)
}

/** Only a real boolean (see `BOOLEAN`). */
export function checkBoolean(field: string, value: unknown, where?: string): boolean {
  return checkValue(field, value, BOOLEAN, where) as boolean
}

/** A safe integer within `range` (inclusive), else refused naming the range (see `whole`). */
export function checkWhole(
  field: string,
  value: unknown,
  range: WholeRange,
  where?: string,
): number {
  return checkValue(field, value, whole(range), where) as number
}

/** A function, else refused naming the type given. */
export function checkFunction<F>(field: string, value: F, where?: string): F {
  return checkValue(field, value, FUNCTION, where)
}

/** An object with every method in `methods`, else refused with `shape` (see `methods`). */
export function checkMethods<T>(
  field: string,
  value: T,
  names: readonly string[],
  shape: string,
  where?: string,
): NonNullable<T> {
  return checkValue(field, value, methods(names, shape), where) as NonNullable<T>
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
