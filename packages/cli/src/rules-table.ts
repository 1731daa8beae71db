import { type Algorithm, memoryStore, type Rule } from '@tollgate/core'
import { algorithmOfRule } from '@tollgate/core/simulate'
import { amount, bytes, duration } from './format.js'

/** What `tollgate check` tells about one rule. */
export type RuleFacts = {
  readonly rule: Rule
  /** Sustained units per second, minute and day. */
  readonly perSecond: number
  readonly perMinute: number
  readonly perDay: number
  /** The most one moment can admit: a rate rule's burst, a window rule's limit. */
  readonly burst: number
  /** The numbers of state one key takes at most, 8 bytes each. */
  readonly stateNumbers: number
  /** The memory store's bytes for `keys` keys each at its fullest, measured or scaled. */
  readonly memory: { readonly keys: number; readonly bytes: number; readonly measuredOn: number }
}

/** Keys filled to measure a rule's memory; more are scaled from it (the tables grow linearly). */
const MEASURED_KEYS = 100_000
/** A measurement allocates at most about this many bytes. */
const MEASURE_BYTES = 256 * 1024 * 1024

/** Measures what a memory store takes for `keys` keys of this rule, each charged its full capacity. */
function memoryFor(rule: Rule, algorithm: Algorithm, keys: number): RuleFacts['memory'] {
  const perKey = (algorithm.stateSize + 1) * 8
  const measuredOn = Math.max(
    1,
    Math.min(keys, MEASURED_KEYS, Math.floor(MEASURE_BYTES / 2 / perKey)),
  )
  const store = memoryStore({ maxBytes: MEASURE_BYTES * 4, seed: 1 })
  for (let i = 0; i < measuredOn; i++) {
    store.consumeOne(rule.id, algorithm, `key:${i}`, algorithm.limit, 0)
  }
  return { keys, bytes: Math.round((store.bytes / measuredOn) * keys), measuredOn }
}

/**
 * What `tollgate check` tells about each rule: its sustained rates, its burst, and the memory
 * store's bytes for `keys` keys.
 */
export function ruleFacts(rules: readonly Rule[], keys: number): RuleFacts[] {
  return rules.map((rule) => {
    const algorithm = algorithmOfRule(rule)
    const { quota, windowMs } = algorithm.policy
    // A concurrency rule has no window: it admits nothing per unit of time, only at once.
    const perMs = windowMs === 0 ? 0 : quota / windowMs
    return {
      rule,
      perSecond: perMs * 1000,
      perMinute: perMs * 60_000,
      perDay: perMs * 86_400_000,
      burst: algorithm.limit,
      stateNumbers: algorithm.stateSize,
      memory: memoryFor(rule, algorithm, keys),
    }
  })
}

/** The rules as table rows, a header first. */
export function rulesTableRows(facts: readonly RuleFacts[]): string[][] {
  const keys = facts[0]?.memory.keys ?? 0
  const header = [
    'rule',
    'algorithm',
    'per second',
    'per minute',
    'per day',
    'burst',
    'state/key',
    `memory, ${amount(keys)} keys`,
    'applies to',
  ]
  return [
    header,
    ...facts.map(({ rule, perSecond, perMinute, perDay, burst, stateNumbers, memory }) => [
      rule.id,
      rule.algorithm,
      amount(perSecond),
      amount(perMinute),
      amount(perDay),
      amount(burst),
      `${amount(stateNumbers * 8)} B`,
      bytes(memory.bytes),
      appliesTo(rule),
    ]),
  ]
}

/** `per api_key, plan free, POST /v1/login, cost 10, shadow, fails closed`. */
function appliesTo(rule: Rule): string {
  const keyed = rule.match.identity.length > 0
  const parts = [keyed ? `per ${rule.match.identity.join(' + ')}` : 'per process']
  if (rule.match.plan !== undefined) parts.push(`plan ${rule.match.plan.join('/')}`)
  if (rule.match.method !== undefined) parts.push(rule.match.method.join('/'))
  if (rule.match.route !== undefined) parts.push(rule.match.route.join(', '))
  const amountText =
    'burst' in rule
      ? `${amount(rule.rate)} per ${duration(rule.period)}`
      : !('window' in rule)
        ? `${amount(rule.limit)} at once`
        : `${amount(rule.limit)} per ${typeof rule.window === 'number' ? duration(rule.window) : rule.window}`
  parts.push(amountText)
  if (rule.cost !== 1) parts.push(`cost ${rule.cost}`)
  for (const [route, cost] of Object.entries(rule.costByRoute)) parts.push(`${route} costs ${cost}`)
  if (rule.mode === 'shadow') parts.push('shadow')
  if (rule.onStoreError === 'closed') parts.push('fails closed')
  if (rule.onStoreError === 'fallback') parts.push('falls back to a share per instance')
  return parts.join(', ')
}
