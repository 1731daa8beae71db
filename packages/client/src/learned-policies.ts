import type { ReadFields } from '@tollgate/core/fields'
import { levelAt, msUntil, type Refill, refillOf } from './learned-refill.js'
import { costIn, type Spend } from './spend.js'

/**
 * What the client remembers of one server policy: units left at a time, how they come back
 * before the reset (if the fields say), and the reset, when the quota is surely full again.
 */
type Learned = {
  readonly scope: string
  /** The policy name as events report it: `name`, `name (pk …)`, or `Retry-After`. */
  readonly label: string
  /** What the policy counts (`tokens`, `input-tokens`, …); any other unit counts requests. */
  readonly unit: string | undefined
  /** Units left at `at`, × `refill.windowMs` when the policy refills (× 1 when not). */
  level: number
  at: number
  readonly refill: Refill | undefined
  readonly resetAt: number
  /** A refusal's Retry-After: holds back every call, whatever it costs. */
  readonly holdsAll: boolean
}

/**
 * Why a call waits for a learned policy: the policy's label, the wait in ms, and whether it
 * waits for the reset (`false`: for units coming back at the policy's rate, before it).
 */
type LearnedWait = {
  readonly policy: string
  readonly delayMs: number
  readonly untilReset: boolean
}

/** Ms from `now` until `entry` holds `cost` units: at its rate if it refills, else at its reset. */
function waitOf(entry: Learned, cost: number, now: number): number {
  const untilReset = entry.resetAt - now
  if (entry.holdsAll) return untilReset
  if (entry.refill === undefined) return entry.level >= cost ? 0 : untilReset
  return Math.min(untilReset, msUntil(entry.level, entry.at, entry.refill, cost, now))
}

/** Whole units `entry` holds at `now`, as far as the client can tell. */
function unitsAt(entry: Learned, now: number): number {
  if (entry.refill === undefined) return entry.level
  return Math.floor(levelAt(entry.level, entry.at, entry.refill, now) / entry.refill.windowMs)
}

export type LearnedPolicies = {
  /**
   * The longest wait any policy of `scope` asks of a call that spends `spend` at `now` (each
   * policy charged in its unit); undefined for none.
   */
  readonly waitFor: (scope: string, spend: Spend, now: number) => LearnedWait | undefined
  /** Counts a call sent now against every known policy of `scope`, each in its unit. */
  readonly spend: (scope: string, spend: Spend, now: number) => void
  /**
   * Learns from a response. `othersInFlight` is what the calls to the scope sent before it
   * answered spend: it may not be counted in what it says, so it is taken off its `remaining`.
   */
  readonly learn: (
    scope: string,
    fields: ReadFields,
    refused: boolean,
    now: number,
    othersInFlight: Spend,
  ) => void
  /** How many policies are remembered (bounded by `maxPolicies`). */
  readonly size: () => number
}

const RETRY_AFTER = 'Retry-After'

/** JSON keeps any scope text and policy id apart, whatever characters they hold. */
const keyOf = (scope: string, id: string) => JSON.stringify([scope, id])

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
    const key = keyOf(scope, id)
    entries.delete(key)
    entries.set(key, { ...entry, scope })
    const keys = byScope.get(scope) ?? new Set<string>()
    byScope.set(scope, keys)
    keys.add(key)
    while (entries.size > maxPolicies) forget(entries.keys().next().value!)
  }

  return {
    waitFor(scope, spend, now) {
      let longest: LearnedWait | undefined
      for (const [key, entry] of live(scope, now)) {
        // Touch: a policy in use is not the one to evict.
        entries.delete(key)
        entries.set(key, entry)
        // A call of cost 0 spends nothing, so only a refusal's Retry-After holds it back.
        const delayMs = waitOf(entry, costIn(entry.unit, spend), now)
        if (delayMs <= 0) continue
        if (longest === undefined || delayMs > longest.delayMs)
          longest = { policy: entry.label, delayMs, untilReset: delayMs === entry.resetAt - now }
      }
      return longest
    },
    spend(scope, spend, now) {
      for (const [, entry] of live(scope, now)) {
        const cost = costIn(entry.unit, spend)
        const scale = entry.refill?.windowMs ?? 1
        const level =
          entry.refill === undefined
            ? entry.level
            : levelAt(entry.level, entry.at, entry.refill, now)
        entry.level = Math.max(0, level - cost * scale)
        entry.at = now
      }
    },
    learn(scope, fields, refused, now, othersInFlight) {
      for (const policy of fields.policies) {
        if (policy.remaining === undefined || policy.resetMs === undefined || policy.resetMs === 0)
          continue
        const label =
          policy.partitionKey === undefined
            ? policy.name
            : `${policy.name} (pk ${policy.partitionKey})`
        const id = `${policy.name}:${policy.partitionKey ?? ''}`
        const previous = entries.get(keyOf(scope, id))
        const live = previous !== undefined && previous.resetAt > now
        const refill = live
          ? refillOf(
              policy,
              policy.resetMs,
              now,
              previous.refill,
              unitsAt(previous, now),
              previous.at,
            )
          : refillOf(policy, policy.resetMs, now, undefined)
        // `r` is whole units: what is left of a unit coming back is not counted yet.
        const unit = policy.quotaUnit
        const others = costIn(unit, othersInFlight)
        const told = Math.max(0, policy.remaining - others) * (refill?.windowMs ?? 1)
        // A smoothed window's flow goes on at its own pace: units the server holds beyond it
        // came back as a window stopped weighing, and spent now would come back only as the
        // next one runs, slower than the flow assumes.
        const flowsOn = live && refill?.smoothed === true && refill.from === previous.refill?.from
        remember(scope, id, {
          label: label === '' ? 'default' : label,
          unit,
          level: flowsOn ? Math.min(told, levelAt(previous.level, previous.at, refill, now)) : told,
          at: now,
          refill,
          resetAt: now + policy.resetMs,
          holdsAll: false,
        })
      }
      // A refusal's Retry-After holds for the whole scope, whatever policy it came from.
      if (refused && fields.retryAfterMs !== undefined && fields.retryAfterMs > 0) {
        remember(scope, RETRY_AFTER, {
          label: RETRY_AFTER,
          unit: undefined,
          level: 0,
          at: now,
          refill: undefined,
          resetAt: now + fields.retryAfterMs,
          holdsAll: true,
        })
      }
    },
    size: () => entries.size,
  }
}
