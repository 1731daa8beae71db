import type { CalendarUnit } from '../algorithms/calendar.js'
import type { CarryStrategy } from '../algorithms/carried-use.js'
import type { QueueOrder } from '../algorithms/concurrency.js'

/** `enforce` denies over the limit; `shadow` counts and reports "would deny" but never denies. */
export type RuleMode = 'enforce' | 'shadow'

/**
 * What a rule does when its store fails: admit (`open`) or refuse (`closed`) the request, or
 * decide it in this process with the rule's share of its allowance (`fallback`: the store must
 * offer `consumeLocally`, as `fallbackStore` does).
 */
export type StoreErrorPolicy = 'open' | 'closed' | 'fallback'

/**
 * What a rule does with a request that lacks the identity it keys on: count it under the client
 * IP (`ip`) or refuse it (`deny`). It is never let through unlimited.
 */
export type MissingIdentityPolicy = 'ip' | 'deny'

/** Identities the adapters derive; any other name is read from `RequestFacts.identities`. */
export type IdentityName = 'ip' | 'api_key' | 'user' | (string & {})

/** Algorithms written with `rate`, `period` and `burst`. */
export type RateAlgorithmName = 'token_bucket' | 'gcra' | 'leaky_bucket'
/** Algorithms written with `limit` per `window`. */
export type WindowAlgorithmName = 'fixed_window' | 'sliding_log' | 'sliding_window'
/** Counts requests in flight rather than requests over time. */
export type ConcurrencyAlgorithmName = 'concurrency'

type DurationUnit =
  | 'ms'
  | 's'
  | 'sec'
  | 'second'
  | 'seconds'
  | 'm'
  | 'min'
  | 'minute'
  | 'minutes'
  | 'h'
  | 'hour'
  | 'hours'
  | 'd'
  | 'day'
  | 'days'

/**
 * A duration with its unit, such as `'500ms'`, `'60s'`, `'1m'`, `'1 day'`. A bare number is
 * refused: files count seconds (`window_s: 60`), so `window: 60` would read as 60 s to some and
 * 60 ms to others.
 */
export type Duration = `${number}${DurationUnit}` | `${number} ${DurationUnit}`

/**
 * Whole milliseconds, as a validated rule holds `period` and `window`. Only validation makes
 * them (a bare number in code is refused: see `Duration`); they read as plain numbers. The brand
 * is keyed by a string, not a unique symbol, so that the declarations of every entry point
 * (`@tollgate/core`, `@tollgate/core/rules-file`) agree on it.
 */
export type Milliseconds = number & { readonly '~unit': 'ms' }

/** Which requests a rule applies to; every given condition must hold. */
export type RuleMatchConfig = {
  /** Keys the rule on one identity, or on several together (`['account', 'ip']`). */
  readonly identity: IdentityName | readonly IdentityName[]
  /** Only requests of this plan (or one of these plans). @default any plan */
  readonly plan?: string | readonly string[]
  /** Only these methods, e.g. `'POST'`. @default any method */
  readonly method?: string | readonly string[]
  /** Only these routes, e.g. `'POST /v1/labels:batch'`, `'/v1/orders/:id'`, `'/v1/*'`. @default any route */
  readonly route?: string | readonly string[]
}

type RuleConfigBase = {
  /** Unique, stable name: it namespaces the rule's state and is sent as the policy name. */
  readonly id: string
  /** Free text for people reading the configuration. */
  readonly description?: string
  readonly match: RuleMatchConfig
  /** @default 'enforce' */
  readonly mode?: RuleMode
  /** Units charged per request when no `costByRoute` entry matches. @default 1 */
  readonly cost?: number
  /** Route → units charged, e.g. `{ 'POST /v1/labels:batch': 10 }`; 0 makes a route free. */
  readonly costByRoute?: Readonly<Record<string, number>>
  /**
   * Fail closed for login and payments; open for read APIs; `fallback` keeps limiting in each
   * process with its share of the allowance (see `fallbackStore`). @default 'open'
   */
  readonly onStoreError?: StoreErrorPolicy
  /** @default 'ip' */
  readonly onMissingIdentity?: MissingIdentityPolicy
  /**
   * What each key's state becomes when `limiter.update` changes this rule's figures (its id
   * kept): `'keep'` the amount used, `'proportional'` the fraction used, `'reset'` a fresh state,
   * `'additive'` what remains plus the change in allowance. See
   * docs/concepts/changing-rules-while-running.md. @default 'keep' ('reset' for `leaky_queue`)
   */
  readonly onChange?: CarryStrategy
  /**
   * The version of the rule's figures, a whole number ≥ 0 that rises whenever they change: what
   * a store shared between processes (Redis) keeps beside each key's state, so that a process
   * still running older figures never rolls a newer state back. Give the same rule the same
   * version in every process. See docs/concepts/changing-rules-while-running.md. Needed to
   * change a rule's figures on Redis; the memory store carries states without it.
   */
  readonly version?: number
  /**
   * Makes the rule's charge a reservation: the request is admitted against an estimate (`cost`,
   * `costByRoute`, or `DecideOptions.estimate`), and `limiter.settle(verdict, actual)` replaces
   * it with what the request really cost once it is known (tokens an answer used, bytes it
   * sent). `true` accepts a settle within ten minutes of the reservation, a duration within
   * that; a later settle does nothing and the estimate stands. Not for `leaky_queue` or
   * `concurrency`. See docs/concepts/charging-after-the-response.md. @default none: the charge
   * is final
   */
  readonly settle?: boolean | Duration | Milliseconds
  /**
   * Blocks a client the rule denies, for longer at each repeated offence: see `PenaltyConfig`
   * and docs/concepts/penalties-and-operators.md. Not for shadow or concurrency rules.
   * @default none: a denial lasts only until the quota allows the request again
   */
  readonly penalty?: PenaltyConfig
}

/**
 * A penalty that remembers, written in code. An offence is a request the rule's limit denies
 * while the client is not blocked (a request refused during a block is not one). The n-th
 * remembered offence blocks the client under this rule for `block × factor^(n−1)`, at most
 * `maxBlock`; offences are all forgotten once `forgetAfter` passes after a block ends without a
 * new one.
 * @example { block: '1m', factor: 2, maxBlock: '1h', forgetAfter: '1d', forbidAfter: 5 }
 */
export type PenaltyConfig = {
  /** The first offence's block. */
  readonly block: Duration | Milliseconds
  /** Each further offence multiplies the block by this whole number. @default 2 */
  readonly factor?: number
  /** The longest block, whatever the count. @default `block`, or a day if longer */
  readonly maxBlock?: Duration | Milliseconds
  /** Offences are forgotten this long after a block ends without another. @default '1d' */
  readonly forgetAfter?: Duration | Milliseconds
  /**
   * From this many remembered offences on, a blocked client is answered 403 Forbidden instead
   * of 429. @default never
   */
  readonly forbidAfter?: number
}

/** A validated penalty: durations in whole ms, defaults filled in. */
export type PenaltyRule = {
  readonly block: Milliseconds
  readonly factor: number
  readonly maxBlock: Milliseconds
  readonly forgetAfter: Milliseconds
  readonly forbidAfter?: number
}

/** A rate rule, written in code: `rate` units per `period`, bursts of up to `burst`. */
export type RateRuleConfig = RuleConfigBase & {
  readonly algorithm: RateAlgorithmName
  readonly rate: number
  /** @default '1s' */
  readonly period?: Duration | Milliseconds
  readonly burst: number
}

/**
 * A queue rule, written in code (nginx `limit_req`): requests leave at `rate` per `period`, up to
 * `burst` of them wait in line for their slot, and a request that finds the line full is denied.
 */
export type QueueRuleConfig = RuleConfigBase & {
  readonly algorithm: 'leaky_queue'
  readonly rate: number
  /** @default '1s' */
  readonly period?: Duration | Milliseconds
  /** How many requests may wait in line (nginx `burst=`). */
  readonly burst: number
  /** How many excess requests are served at once before the rest wait (nginx `delay=`). @default 0 */
  readonly delay?: number
  /** Serve the whole burst at once, never delaying (nginx `nodelay`): `delay: burst`. */
  readonly nodelay?: boolean
  /** A request whose slot lies further away is denied at once instead of held. @default none */
  readonly maxWait?: Duration | Milliseconds
}

/** A window rule, written in code: at most `limit` units per `window`. */
export type WindowRuleConfig = RuleConfigBase & {
  /** `sliding_counter` (the spec's name) is accepted for `sliding_window`. */
  readonly algorithm: WindowAlgorithmName | 'sliding_counter'
  readonly limit: number
  /**
   * A duration, or for `fixed_window` a calendar window: `'day'`, `'week'` (ISO, from Monday),
   * `'month'` (resets on the 1st) or `'year'`, from local midnight in `timeZone`.
   */
  readonly window: Duration | Milliseconds | CalendarUnit
  /** The IANA time zone of a calendar window, e.g. `'Europe/Paris'`. @default 'UTC' */
  readonly timeZone?: string
  /**
   * `sliding_window` only: count in this many sub-window counters per window instead of two
   * (the previous and current windows), which estimates the rolling window more closely.
   */
  readonly buckets?: number
}

/**
 * A concurrency rule, written in code: at most `limit` units in flight at once (each request
 * holds its cost until its response ends). Keyed like any rule, or, with no `identity`, one
 * limit for the whole process: protect a resource whoever calls.
 */
export type ConcurrencyRuleConfig = Omit<RuleConfigBase, 'match'> & {
  readonly match: Omit<RuleMatchConfig, 'identity'> & {
    /** @default none: one limit shared by every request the rule matches */
    readonly identity?: IdentityName | readonly IdentityName[]
  }
  readonly algorithm: ConcurrencyAlgorithmName
  readonly limit: number
  /**
   * How many refused requests may wait for a slot, per key, instead of being refused at once;
   * a freed slot goes to the next of them. @default 0 (none wait)
   */
  readonly queue?: number
  /** With `queue`: how long a request waits for a slot before it is refused. @default '10s' */
  readonly maxWait?: Duration | Milliseconds
  /**
   * With `queue`: a freed slot goes to the oldest waiting request (`fifo`) or the newest
   * (`lifo`, which refuses the oldest when the line is full), as .NET's
   * `QueueProcessingOrder` offers. @default 'fifo'
   */
  readonly queueOrder?: QueueOrder
}

/**
 * A rule as written in TypeScript (camelCase). A validated `Rule` is also a valid `RuleConfig`,
 * taken as it is. `algorithm` tells the two kinds apart: a literal that mixes their fields (a
 * window rule given a `burst`) fails as an excess property. Neither kind marks the other's
 * fields `?: never`, which would make editors offer only one kind's algorithms in a new rule.
 */
export type RuleConfig = RateRuleConfig | QueueRuleConfig | WindowRuleConfig | ConcurrencyRuleConfig

/** A validated rule's match: lists normalised, routes as `METHOD /path` or `/path`. */
export type RuleMatch = {
  /** Empty for a concurrency rule that limits the whole process. */
  readonly identity: readonly string[]
  readonly plan?: readonly string[]
  readonly method?: readonly string[]
  readonly route?: readonly string[]
}

type RuleBase = {
  readonly id: string
  readonly description?: string
  readonly match: RuleMatch
  readonly mode: RuleMode
  readonly cost: number
  readonly costByRoute: Readonly<Record<string, number>>
  readonly onStoreError: StoreErrorPolicy
  readonly onMissingIdentity: MissingIdentityPolicy
  /** Set on a rule whose charges are settled: how long after its reservation, in whole ms. */
  readonly settle?: Milliseconds
  /** Set on a rule that penalises repeated denials. */
  readonly penalty?: PenaltyRule
  /** Set when given: how its keys carry over a change of its figures (`limiter.update`). */
  readonly onChange?: CarryStrategy
  /** Set when given: the version of its figures, kept beside each state by a shared store. */
  readonly version?: number
}

/** A validated rate rule; `period` in whole ms. */
export type RateRule = RuleBase & {
  readonly algorithm: RateAlgorithmName
  readonly rate: number
  readonly period: Milliseconds
  readonly burst: number
}

/** A validated queue rule; `period` and `maxWait` in whole ms, `nodelay` read as `delay: burst`. */
export type QueueRule = RuleBase & {
  readonly algorithm: 'leaky_queue'
  readonly rate: number
  readonly period: Milliseconds
  readonly burst: number
  readonly delay: number
  readonly maxWait?: Milliseconds
}

/** A validated window rule; `window` in whole ms, or a calendar window. */
export type WindowRule = RuleBase & {
  readonly algorithm: WindowAlgorithmName
  readonly limit: number
  readonly window: Milliseconds | CalendarUnit
  /** A calendar window's zone, as the runtime names it. */
  readonly timeZone?: string
  readonly buckets?: number
}

/** A validated concurrency rule; `maxWait` in whole ms. */
export type ConcurrencyRule = RuleBase & {
  readonly algorithm: ConcurrencyAlgorithmName
  readonly limit: number
  readonly queue?: number
  readonly maxWait?: Milliseconds
  readonly queueOrder?: QueueOrder
}

/** A validated, frozen rule: what `defineRules`, `parseRules` and `loadRulesText` return. */
export type Rule = RateRule | QueueRule | WindowRule | ConcurrencyRule

declare const rulesMustBeLiteral: unique symbol

/**
 * What TypeScript names when rules lost their literal types: an array declared as
 * `const rules = [...]` is typed `algorithm: string`, which no `RuleConfig` accepts. The type
 * is never satisfied; its text tells the fix.
 */
export type RulesMustBeLiteral<Fix extends string> = { readonly [rulesMustBeLiteral]: Fix }

/**
 * `never` for rules TypeScript can check; `RulesMustBeLiteral` for an array of rules whose
 * `algorithm` widened to `string`. Functions taking rules accept
 * `readonly RuleConfig[] | (R & WidenedRulesError<R>)`: for rules written in place the second
 * member is `never`, so their errors (a misspelt field, a duration without a unit) and the
 * editor's completions stay those of `RuleConfig`, and a widened array is refused with the fix.
 */
export type WidenedRulesError<R> = R extends readonly RuleConfig[]
  ? never
  : R extends readonly { readonly algorithm: string }[]
    ? string extends R[number]['algorithm']
      ? RulesMustBeLiteral<'rules declared apart lose their literal types (algorithm: string): write the array inside defineRules([...]), or end it with `as const`'>
      : never
    : never
