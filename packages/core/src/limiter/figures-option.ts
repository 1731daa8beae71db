import { checkFunction, checkWhole, invalidOption, shown } from '../options/option-values.js'
import { refuseUnknownOptions } from '../options/unknown-options.js'
import { toMilliseconds } from '../rules/duration.js'
import type { Duration } from '../rules/types.js'
import type { Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import type { MaybePromise } from './types.js'

/**
 * A rule's figures for one client, as its lookup gives them: those of the rule's algorithm
 * family, in the rule's own shape. A rate rule (`token_bucket`, `gcra`, `leaky_bucket`) takes
 * `rate`, `period` and `burst`; a window rule (`fixed_window`, `sliding_window`, `sliding_log`)
 * `limit` and `window`. A figure left out is the rule's own.
 * @example { rate: 100, period: '1s', burst: 200 }
 */
export type ClientFigures = {
  readonly limit?: number
  readonly window?: Duration
  readonly rate?: number
  readonly period?: Duration
  readonly burst?: number
}

/** Who the figures are looked up for: what the rule knows of the client. */
export type FiguresClient = {
  /** The rule's id. */
  readonly rule: string
  /** The key the rule counts the client under, e.g. `api_key:k_123`. */
  readonly key: string
  /** The values of the identities the rule keys on, e.g. `{ api_key: 'k_123' }`. */
  readonly identities: Readonly<Record<string, string>>
  /** The request's plan (an adapter's `plan` hook), when known. */
  readonly plan: string | undefined
}

/**
 * Where one rule's figures come from, per client (the limiter's `figures` option, by rule id).
 * @example
 * { of: async ({ identities }) => PLANS[await planOf(identities.api_key)], cacheFor: '5m' }
 */
export type FiguresSource = {
  /**
   * The client's figures (`ClientFigures`), or undefined for the rule's own; a promise for a
   * lookup (a database, a service). One that throws, rejects, takes longer than `timeout` or
   * gives a figure the rule would refuse is never an error for the request: the client keeps the
   * figures it had, or the rule's own (warned once per distinct problem, counted in `limiter.figuresRefused`).
   */
  readonly of: (client: FiguresClient) => MaybePromise<ClientFigures | undefined | null>
  /**
   * How long a client's figures are used before they are looked up again, on the limiter's
   * clock. A failed lookup is tried again after at most 5 s.
   * @default '1m'
   */
  readonly cacheFor?: Duration
  /**
   * How long a lookup is awaited before the client is decided without it.
   * @default '1s'
   */
  readonly timeout?: Duration
  /**
   * The most clients whose figures are kept; past it the oldest looked up are dropped.
   * @default 10_000
   */
  readonly maxClients?: number
}

/** The limiter's `figures` option: where each rule's per-client figures come from, by rule id. */
export type FiguresOption = Readonly<Record<string, FiguresSource>>

/** One source, checked: durations in whole ms. */
export type CheckedSource = {
  readonly of: FiguresSource['of']
  readonly cacheForMs: number
  readonly timeoutMs: number
  readonly maxClients: number
}

const SOURCE_FIELDS = ['of', 'cacheFor', 'timeout', 'maxClients']
const DEFAULT_CACHE_FOR_MS = 60_000
const DEFAULT_TIMEOUT_MS = 1000
const DEFAULT_MAX_CLIENTS = 10_000
/** The algorithms whose figures may be a client's: those whose keys' states carry exactly. */
const FIGURED_ALGORITHMS = [
  'token_bucket',
  'gcra',
  'leaky_bucket',
  'fixed_window',
  'sliding_window',
  'sliding_log',
]

/**
 * The `figures` option checked at start-up, each field refused naming it: a rule id the limiter
 * has, an `of` function, durations with their unit, and a rule and store that can take figures
 * per client.
 */
export function checkFiguresOption(
  given: unknown,
  byId: ReadonlyMap<string, CompiledRule>,
  store: Store,
): Map<string, CheckedSource> {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw invalidOption(
      'figures',
      `expected { [rule id]: { of: (client) => figures, cacheFor: '5m' } }, got ${shown(given)}`,
    )
  }
  const sources = new Map<string, CheckedSource>()
  for (const [id, source] of Object.entries(given)) {
    const field = `figures.${id}`
    const rule = byId.get(id)
    if (rule === undefined) {
      throw invalidOption(field, `no rule "${id}" (rules: ${[...byId.keys()].join(', ')})`)
    }
    if (typeof source !== 'object' || source === null) {
      throw invalidOption(
        field,
        `expected { of: (client) => figures, cacheFor: '5m' }, got ${shown(source)}`,
      )
    }
    refuseUnknownOptions(source, SOURCE_FIELDS, field)
    checkFiguredRule(field, rule)
    checkFiguresStore(field, rule, store)
    const { of, cacheFor, timeout, maxClients } = source as FiguresSource
    sources.set(id, {
      of: checkFunction(`${field}.of`, of),
      cacheForMs: duration(`${field}.cacheFor`, cacheFor, DEFAULT_CACHE_FOR_MS),
      timeoutMs: duration(`${field}.timeout`, timeout, DEFAULT_TIMEOUT_MS),
      maxClients:
        maxClients === undefined
          ? DEFAULT_MAX_CLIENTS
          : checkWhole(`${field}.maxClients`, maxClients, { min: 1 }),
    })
  }
  return sources
}

function duration(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  const ms = toMilliseconds(value)
  if (typeof ms === 'string') throw invalidOption(field, ms)
  return ms
}

/** Rules whose requests wait or settle later hold requests across a change: refused, as `update` does. */
function checkFiguredRule(field: string, rule: CompiledRule): void {
  const problem = unfigurable(rule)
  if (problem !== undefined) throw invalidOption(field, `rule "${rule.id}" ${problem}`)
}

/**
 * Why `rule`'s figures cannot be a client's, or undefined when they can: checked at start-up,
 * and for each lookup (`limiter.update` may change the rule into one whose cannot).
 */
export function unfigurable(rule: CompiledRule): string | undefined {
  const name = rule.algorithm.name
  if (!FIGURED_ALGORITHMS.includes(name)) {
    return `is a ${name} rule, whose figures cannot be a client's (requests wait on it or hold slots); per-client figures are for ${FIGURED_ALGORITHMS.join(', ')}`
  }
  if (rule.settleWithinMs !== undefined) {
    return "settles its charges (settle), whose figures cannot be a client's: reservations wait on it"
  }
  return undefined
}

/** A store that cannot carry a key's state between figures refuses them, rather than reset keys unsaid. */
function checkFiguresStore(field: string, rule: CompiledRule, store: Store): void {
  if (typeof store.carryFigures === 'function') return
  throw invalidOption(
    field,
    `rule "${rule.id}" takes its figures per client, which needs a store that carries a key's state when its figures change: memoryStore and redisStore do; the Durable Object store, mapStore and fallbackStore do not yet`,
  )
}
