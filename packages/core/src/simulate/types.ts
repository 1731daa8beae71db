import type { RuleDecision } from '../limiter/types.js'
import type { Rule, RuleConfig } from '../rules/types.js'

/** One request of a trace. Only `at` is needed; the rest says who sent what. */
export type Arrival = {
  /** Virtual time in whole ms (t = 0 is wherever the trace starts, e.g. 12:00:00). */
  readonly at: number
  /**
   * The client: the value of every identity the rules key on (`ip`, `api_key`, `user` and the
   * declared custom ones), unless `identities` names them. @default 'client'
   */
  readonly key?: string
  /** Units charged under every rule the request matches, in place of the rules' own costs. */
  readonly cost?: number
  /** @default 'GET' */
  readonly method?: string
  /** @default '/' */
  readonly path?: string
  readonly plan?: string
  /** Identity name → value, for traces that tell the identities apart. */
  readonly identities?: Readonly<Record<string, string>>
}

/** What `simulate` replays: the rules, the arrivals, and when to read each key's state. */
export type SimulateOptions = {
  /** Rules in code or as validated (`defineRules`, `loadRulesText`): refused as at start-up. */
  readonly rules: readonly RuleConfig[]
  /** The trace, in any order: it is replayed by time, arrivals at one time in trace order. */
  readonly arrivals: readonly Arrival[]
  /** Identities the rules may key on besides `ip`, `api_key` and `user`. @default [] */
  readonly customIdentities?: readonly string[]
  /**
   * How often each rule's state is read between arrivals, in ms. @default the span over 400,
   * rounded up to whole ms
   */
  readonly sampleEveryMs?: number
  /** The first and last time states are read. @default the first and last arrival */
  readonly from?: number
  readonly until?: number
}

/** What the limiter answered one arrival. */
export type SimulatedRequest = {
  /** The arrival's position in the trace as given. */
  readonly index: number
  readonly at: number
  readonly arrival: Arrival
  readonly allowed: boolean
  /** Why it was denied (`limit`, `missing-identity`), as `Verdict.reason`. */
  readonly reason: string | undefined
  /** One decision per matching rule, in rule order, as the limiter returned them. */
  readonly decisions: readonly RuleDecision[]
}

/**
 * One rule's state for one key at one time, as the algorithm reports it (the same figures as
 * a decision): whatever the algorithm, `used` is what the key holds against its `limit` (tokens
 * spent, a window's count, a log's length, a queue's length) and `remaining` the rest. A GCRA
 * key's theoretical arrival time is `at + resetAfterMs`.
 */
export type StateSample = {
  readonly at: number
  readonly rule: string
  /** The store key (`api_key:k_123`). */
  readonly key: string
  /**
   * `request`: just after a request was decided (the state it left); `read`: read between
   * arrivals, or just before the arrivals at that time.
   */
  readonly phase: 'request' | 'read'
  readonly remaining: number
  readonly used: number
  readonly limit: number
  readonly resetAfterMs: number
}

/**
 * What `simulate` returns: the validated rules, every arrival's outcome, and each rule's state per
 * key over time.
 */
export type Simulation = {
  readonly rules: readonly Rule[]
  /** Every arrival's outcome, in the order they were decided (by time). */
  readonly requests: readonly SimulatedRequest[]
  /** Every rule's state over time, in time order: after each request, and read in between. */
  readonly states: readonly StateSample[]
  /** Warnings the limiter gave (`[tollgate] WARN_…`), each once. */
  readonly warnings: readonly string[]
  readonly from: number
  readonly until: number
}
