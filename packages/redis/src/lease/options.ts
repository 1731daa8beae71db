import { systemTimers } from '@tollgate/core'
import {
  type AlgorithmName,
  checkMethods,
  checkWhole,
  invalidOption,
  type RateLimitError,
  type Timers,
} from '@tollgate/core/store'

/**
 * Algorithms whose allowance can be taken ahead in a lease without ever admitting more than the
 * rule allows (see docs/concepts/redis.md#local-leases-for-hot-keys). Window rules other than
 * the fixed window promise a limit in every window ending at any moment, which a unit spent
 * later than Redis counted it breaks; a queue gives each admission its own slot, which only
 * Redis can place; a concurrency rule counts requests in flight, not over time.
 */
export const LEASABLE: ReadonlySet<AlgorithmName> = new Set<AlgorithmName>([
  'token_bucket',
  'gcra',
  'leaky_bucket',
  'fixed_window',
])

/** Why each algorithm that is not leasable cannot be. */
const NOT_LEASABLE: Readonly<Record<string, string>> = {
  sliding_log:
    'it promises the limit in every window ending at any moment; a unit spent after Redis logged it would age out early',
  sliding_window:
    'it promises the limit in every window ending at any moment; a unit spent after Redis counted it would age out early',
  leaky_queue: 'each admission waits for its own slot, which only Redis can place',
  concurrency: 'it counts requests in flight, not requests over time',
}

/** A rule that may lease: a rule's config (as passed to an adapter), a validated rule, or anything with its id and algorithm. */
export type LeasedRule = { readonly id: string; readonly algorithm: string }

/** Which rules may take leases, for how long and how large: see `leasedStore`. */
export type LeaseOptions = {
  /** The rules whose keys may take leases; every other rule goes to the store as before. */
  readonly rules: readonly LeasedRule[]
  /**
   * The longest a lease may be spent locally. A rate rule's units may be admitted up to this long
   * after Redis granted them; a fixed window's lease also ends with its window.
   * @default 1000
   */
  readonly ttlMs?: number
  /**
   * The largest lease one process takes ahead, beyond the request that takes it, as a share of
   * the rule's limit (its burst for a rate rule). Leases start at nothing and double while a
   * process spends each one before it expires.
   * @default 0.1
   */
  readonly maxShare?: number
  /** The timers that end leases (tests inject manual ones). @default the runtime's */
  readonly timers?: Timers
}

/** The default `ttlMs` of a lease: a second. */
export const DEFAULT_LEASE_TTL_MS = 1000
/** The default `maxShare`: a lease takes at most a tenth of a rule's limit ahead. */
export const DEFAULT_LEASE_SHARE = 0.1

export type ResolvedLeaseOptions = {
  readonly rules: ReadonlySet<string>
  readonly ttlMs: number
  readonly maxShare: number
  readonly timers: Timers
}

export function resolveLeaseOptions(options: LeaseOptions): ResolvedLeaseOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalid('options', 'expected { rules, ttlMs?, maxShare?, timers? }')
  }
  const { rules } = options
  if (!Array.isArray(rules) || rules.length === 0) {
    throw invalid('rules', 'expected a non-empty array of rules (as defineRules returns)')
  }
  const ids = new Set<string>()
  rules.forEach((rule: LeasedRule, index) => {
    const field = `rules[${index}]`
    if (typeof rule !== 'object' || rule === null || typeof rule.id !== 'string') {
      throw invalid(field, 'expected a rule with an id and an algorithm')
    }
    const reason = NOT_LEASABLE[rule.algorithm]
    if (reason !== undefined) {
      throw invalid(
        `${field}.algorithm`,
        `rule '${rule.id}' uses ${rule.algorithm}, which cannot be leased: ${reason}`,
      )
    }
    if (!LEASABLE.has(rule.algorithm as AlgorithmName)) {
      throw invalid(
        `${field}.algorithm`,
        `rule '${rule.id}': expected one of ${[...LEASABLE].join(', ')}, got ${JSON.stringify(rule.algorithm)}`,
      )
    }
    ids.add(rule.id)
  })
  const ttlMs = checkWhole(
    'ttlMs',
    options.ttlMs ?? DEFAULT_LEASE_TTL_MS,
    { min: 1, unit: 'ms' },
    'leasedStore',
  )
  const maxShare = options.maxShare ?? DEFAULT_LEASE_SHARE
  if (typeof maxShare !== 'number' || !(maxShare > 0 && maxShare <= 1)) {
    throw invalid('maxShare', `expected a number in (0, 1], got ${maxShare}`)
  }
  const timers = checkMethods(
    'timers',
    options.timers ?? systemTimers,
    ['setTimeout', 'clearTimeout'],
    '{ setTimeout, clearTimeout }',
    'leasedStore',
  )
  return { rules: ids, ttlMs, maxShare, timers }
}

/** A lease option refused, naming the factory: its `rules` are not the limiter's. */
function invalid(field: string, problem: string): RateLimitError {
  return invalidOption(field, problem, 'leasedStore')
}
