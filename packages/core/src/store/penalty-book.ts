import type { KeyHasher } from './fingerprint.js'
import type { Offences, Penalty } from './types.js'

/*
 * The memory store's record of offences: one entry per penalised rule and key, kept apart from
 * the rule's state so that it outlives that state's expiry (a bucket full again is dropped by a
 * sweep; the offences behind it are not). Keys are kept as fingerprints, as the state tables
 * keep them.
 */

/** One key's offences, and when they are forgotten. */
type Entry = { count: number; blockedUntil: number; forgetAt: number }

/** Expired entries looked for, from the oldest, before a full book drops a live one. */
const EXPIRED_LOOKAHEAD = 8

/**
 * The block of the `count`-th remembered offence: `blockMs × factor^(count − 1)`, at most
 * `maxBlockMs`. Multiplied step by step and stopped at the cap, so no power overflows.
 */
export function blockLengthMs(penalty: Penalty, count: number): number {
  let ms = penalty.blockMs
  for (let i = 1; i < count && penalty.factor > 1 && ms < penalty.maxBlockMs; i++) {
    ms *= penalty.factor
  }
  return Math.min(ms, penalty.maxBlockMs)
}

export type PenaltyBook = {
  /** The key's offences under `rule`, or undefined when none are remembered at `now`. */
  read(rule: string, key: string, now: number): Offences | undefined
  /** Records an offence at `now` and blocks the key for its length; returns the new record. */
  offend(rule: string, key: string, penalty: Penalty, now: number): Offences
  /** Blocks the key until `until`, its count kept (0 when it has none). */
  block(rule: string, key: string, penalty: Penalty, until: number, now: number): void
  /** Forgets the key's offences and lifts its block. */
  forget(rule: string, key: string): void
  /** Drops every entry forgotten by `now`; returns how many. */
  sweep(now: number): number
  readonly size: number
}

/**
 * A bounded book of offences: at most `capacity` entries. A full book first drops an entry
 * already forgotten among its oldest, and only then the entry written longest ago (a client that
 * offends again is written again, so the ones dropped are those that stopped).
 */
export function createPenaltyBook(hasher: KeyHasher, capacity: number): PenaltyBook {
  // Insertion order is write order: an entry written is moved to the end.
  const entries = new Map<string, Entry>()
  const idOf = (rule: string, key: string) => {
    hasher.hash(key)
    return `${rule}\u0000${hasher.first}.${hasher.second}`
  }
  const live = (id: string, now: number): Entry | undefined => {
    const entry = entries.get(id)
    if (entry === undefined || entry.forgetAt > now) return entry
    entries.delete(id)
    return undefined
  }
  const write = (id: string, entry: Entry, now: number) => {
    entries.delete(id)
    if (entries.size >= capacity) makeRoom(now)
    entries.set(id, entry)
  }
  const makeRoom = (now: number) => {
    let looked = 0
    for (const [id, entry] of entries) {
      if (looked++ === EXPIRED_LOOKAHEAD) break
      if (entry.forgetAt <= now) entries.delete(id)
    }
    if (entries.size >= capacity) entries.delete(entries.keys().next().value!)
  }
  return {
    get size() {
      return entries.size
    },
    read(rule, key, now) {
      const entry = live(idOf(rule, key), now)
      return entry === undefined
        ? undefined
        : { count: entry.count, blockedUntil: entry.blockedUntil }
    },
    offend(rule, key, penalty, now) {
      const id = idOf(rule, key)
      const count = (live(id, now)?.count ?? 0) + 1
      const blockedUntil = now + blockLengthMs(penalty, count)
      write(id, { count, blockedUntil, forgetAt: blockedUntil + penalty.forgetAfterMs }, now)
      return { count, blockedUntil }
    },
    block(rule, key, penalty, until, now) {
      const id = idOf(rule, key)
      const count = live(id, now)?.count ?? 0
      write(id, { count, blockedUntil: until, forgetAt: until + penalty.forgetAfterMs }, now)
    },
    forget(rule, key) {
      entries.delete(idOf(rule, key))
    },
    sweep(now) {
      let dropped = 0
      for (const [id, entry] of entries) {
        if (entry.forgetAt > now) continue
        entries.delete(id)
        dropped++
      }
      return dropped
    },
  }
}
