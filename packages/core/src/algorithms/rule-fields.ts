/**
 * The rule fields only one algorithm takes (a queue's `delay`, `nodelay` and `maxWait`, a
 * concurrency rule's `queue`, `queueOrder` and `maxWait`) are read by a reader its factory
 * carries, so that a bundle without the algorithm holds none of their checks. The rules layer,
 * above this one, hands the reader its view of the rule (`RuleFieldAccess`).
 */

/** The fields a reader may read (`burst` for a queue's `nodelay`). */
type ReadField = 'burst' | 'delay' | 'nodelay' | 'maxWait' | 'queue' | 'queueOrder'

/** What readers write: the rule model's values of their fields. */
export type RuleFieldValues = {
  delay?: number
  maxWait?: number
  queue?: number
  queueOrder?: 'fifo' | 'lifo'
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
  /** How a value is named in messages (`"5s"`, `-1`, `an object`). */
  readonly typeName: (value: unknown) => string
  /** A duration (`'5s'`, 5000) as whole ms, or the problem with it. */
  readonly toMilliseconds: (value: unknown) => number | string
}

/** Reads an algorithm's own rule fields into `values` (the rule model's); false after reporting. */
export type ReadRuleFields = (rule: RuleFieldAccess, values: RuleFieldValues) => boolean

/** A factory that carries the reader of its own rule fields. */
export type WithRuleFields<F> = F & { readonly ruleFields: ReadRuleFields }

/** `factory` carrying `ruleFields`. Pure: a module that exports the result does no work. */
export function withRuleFields<F extends object>(
  factory: F,
  ruleFields: ReadRuleFields,
): WithRuleFields<F> {
  return Object.assign(factory, { ruleFields })
}
