import type { ReadFields } from '@tollgate/core/fields'

/** What the client remembers of one server policy: units left until a time. */
type Learned = {
  readonly scope: string
  /** The policy name as events report it: `name`, `name (pk …)`, or `Retry-After`. */
  readonly label: string
  remaining: number
  readonly resetAt: number
  /** A refusal's Retry-After: holds back every call, whatever it costs. */
  readonly holdsAll: boolean
}

/** Why a call waits for a learned policy: the policy's label and the wait in ms. */
type LearnedWait = { readonly policy: string; readonly delayMs: number }

export type LearnedPolicies = {
  /** The longest wait any policy of `scope` asks of a call of `cost` at `now`; 0 for none. */
  readonly waitFor: (scope: string, cost: number, now: number) => LearnedWait | undefined
  /** Counts a call of `cost` sent now against every known policy of `scope`. */
  readonly spend: (scope: string, cost: number, now: number) => void
  /**
   * Learns from a response. `othersInFlight` calls to the scope were sent before it answered
   * and may not be counted in what it says: they are taken off its `remaining`.
   */
  readonly learn: (
    scope: string,
    fields: ReadFields,
    refused: boolean,
    now: number,
    othersInFlight: number,
  ) => void
  /** How many policies are remembered (bounded by `maxPolicies`). */
  readonly size: () => number
}

const RETRY_AFTER = 'Retry-After'

/**
 * Policies learned per scope (an origin, or an origin and a caller's partition), bounded: at
 * most `maxPolicies` are kept, the least recently used dropped first. A policy is forgotten once
 * its reset time has passed: what it said no longer holds.
 */
export function createLearnedPolicies(maxPolicies: number): LearnedPolicies {
  // Insertion order is recency order: a touched entry is deleted and set again.
  const entries = new Map<string, Learned>()
  const byScope = new Map<string, Set<string>>()

  function forget(key: string): void {
    const scope = entries.get(key)?.scope ?? ''
    entries.delete(key)
    const keys = byScope.get(scope)
    keys?.delete(key)
    if (keys?.size === 0) byScope.delete(scope)
  }

  function live(scope: string, now: number): Array<[string, Learned]> {
    const out: Array<[string, Learned]> = []
    for (const key of byScope.get(scope) ?? []) {
      const entry = entries.get(key)!
      if (entry.resetAt <= now) forget(key)
      else out.push([key, entry])
    }
    return out
  }

  function remember(scope: string, id: string, entry: Omit<Learned, 'scope'>): void {
    // JSON keeps any scope text and policy id apart, whatever characters they hold.
    const key = JSON.stringify([scope, id])
    entries.delete(key)
    entries.set(key, { ...entry, scope })
    const keys = byScope.get(scope) ?? new Set<string>()
    byScope.set(scope, keys)
    keys.add(key)
    while (entries.size > maxPolicies) forget(entries.keys().next().value!)
  }

  return {
    waitFor(scope, cost, now) {
      let longest: LearnedWait | undefined
      for (const [key, entry] of live(scope, now)) {
        // Touch: a policy in use is not the one to evict.
        entries.delete(key)
        entries.set(key, entry)
        // A call of cost 0 spends nothing, so only a refusal's Retry-After holds it back.
        if (!entry.holdsAll && entry.remaining >= cost) continue
        const delayMs = entry.resetAt - now
        if (longest === undefined || delayMs > longest.delayMs)
          longest = { policy: entry.label, delayMs }
      }
      return longest
    },
    spend(scope, cost, now) {
      for (const [, entry] of live(scope, now))
        entry.remaining = Math.max(0, entry.remaining - cost)
    },
    learn(scope, fields, refused, now, othersInFlight) {
      for (const policy of fields.policies) {
        if (policy.remaining === undefined || policy.resetMs === undefined || policy.resetMs === 0)
          continue
        const label =
          policy.partitionKey === undefined
            ? policy.name
            : `${policy.name} (pk ${policy.partitionKey})`
        remember(scope, `${policy.name}:${policy.partitionKey ?? ''}`, {
          label: label === '' ? 'default' : label,
          remaining: Math.max(0, policy.remaining - othersInFlight),
          resetAt: now + policy.resetMs,
          holdsAll: false,
        })
      }
      // A refusal's Retry-After holds for the whole scope, whatever policy it came from.
      if (refused && fields.retryAfterMs !== undefined && fields.retryAfterMs > 0) {
        remember(scope, RETRY_AFTER, {
          label: RETRY_AFTER,
          remaining: 0,
          resetAt: now + fields.retryAfterMs,
          holdsAll: true,
        })
      }
    },
    size: () => entries.size,
  }
}
