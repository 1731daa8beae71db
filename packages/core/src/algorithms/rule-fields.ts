/**
 * The rule fields only one algorithm takes (a queue's `delay`, `nodelay` and `maxWait`, a
 * concurrency rule's `queue`, `queueOrder` and `maxWait`, a calendar window's `timeZone`, the
 * sliding window's `buckets`) are read by a reader its factory carries, so that a bundle without
 * the algorithm holds none of their checks. The rules layer, above this one, hands the reader its
 * view of the rule (`RuleFieldAccess`) and refuses these fields on every other algorithm.
 */

/** The fields that only some algorithms take. */
export type OwnField =
  | 'delay'
  | 'nodelay'
  | 'maxWait'
  | 'queue'
  | 'queueOrder'
  | 'timeZone'
  | 'buckets'

/**
 * The fields a reader may read (`burst` for a queue's `nodelay`, `onChange` for what carries,
 * `window` to name it).
 */
type ReadField = OwnField | 'burst' | 'onChange' | 'window'

/** What readers write: the rule model's values of their fields. */
export type RuleFieldValues = {
  delay?: number
  maxWait?: number
  queue?: number
  queueOrder?: 'fifo' | 'lifo'
  window?: number | string
  timeZone?: string
  buckets?: number
}

/** One rule as the rules layer shows it to an algorithm's reader. */
export type RuleFieldAccess = {
  /** The rule's fields in code shape (`maxWait`, not `max_wait_s`). */
  readonly fields: { readonly [K in ReadField]?: unknown }
  /** How each field was spelt in the user's input, for messages. */
  readonly labels: { readonly [K in ReadField]: string }
  /** The value of a field that was present but invalid and is already reported. */
  readonly reported: symbol
  /** Reports a problem with the field spelt `label`. */
  readonly issue: (label: string, problem: string) => void
  /** A duration (`'5s'`, 5000) as whole ms, or the problem with it. */
  readonly toMilliseconds: (value: unknown) => number | string
}

/** An algorithm's reader of its own rule fields. */
export type RuleFieldReader = {
  /** The fields it reads; on any other algorithm they are refused. */
  readonly takes: readonly OwnField[]
  /** Reads them into `values` (the rule model's, its rate or window already read); false after reporting. */
  readonly read: (rule: RuleFieldAccess, values: RuleFieldValues) => boolean
  /** Why a `settle` cannot apply to its charges, when it cannot. */
  readonly unsettled?: string
  /** Refuses `onStoreError: 'fallback'` for a state that cannot be split between processes. */
  readonly noFallback?: typeof noFallback
}

/** Why a rule of `name` cannot take `onStoreError: 'fallback'`. */
export function noFallback(name: string): string {
  return `'fallback' is for rate and window rules, not ${name}: use 'open' or 'closed'`
}

/** A factory that carries the reader of its own rule fields. */
export type WithRuleFields<F> = F & { readonly ruleFields: RuleFieldReader }

/** `factory` carrying `ruleFields`. Pure: a module that exports the result does no work. */
export function withRuleFields<F extends object>(
  factory: F,
  ruleFields: RuleFieldReader,
): WithRuleFields<F> {
  return Object.assign(factory, { ruleFields })
}
