import type { Algorithm } from '@tollgate/core/store'

/** The parts of a Durable Object's storage the limiter object uses (`ctx.storage`). */
export type LimiterStorage = {
  /** Every stored state, read once when the object starts. */
  list<T = unknown>(): Promise<Map<string, T>>
  /** Writes the states a decision changed. */
  put(entries: Record<string, unknown>): Promise<void>
  /** Deletes states back to full capacity: nothing is lost. */
  delete(keys: string[]): Promise<number>
  /** When the alarm is set for, or null. */
  getAlarm(): Promise<number | null>
  /** Sets the alarm that deletes the states once they are back to full capacity. */
  setAlarm(scheduledTime: number): Promise<void>
}

/** A state as stored: the algorithm's numbers, and when (on the object's clock) it is fresh. */
type Stored = { readonly state: number[]; readonly freshBy: number }

/**
 * Kept after a state is back to full capacity by the caller's clock, before the alarm deletes
 * it: callers' clocks (`time: 'caller'`) may run behind the object's by this much.
 */
const EXPIRY_GRACE_MS = 60_000

/**
 * The states of one object (its key's, one per rule), held in memory and written through to
 * durable storage. A write sets the object's alarm, unless one is set, for when its last state
 * is back to full capacity; the alarm deletes the states that are and waits for the others: an
 * object left alone keeps nothing.
 */
export function stateTable(storage: LimiterStorage) {
  const held = new Map<string, Stored>()
  let alarmAt: number | null = null

  return {
    /** Reads every state (an object holds one per rule of its key) and the alarm. */
    async load(): Promise<void> {
      for (const [id, stored] of await storage.list<Stored>()) held.set(id, stored)
      alarmAt = await storage.getAlarm()
    },
    /** A copy of the state `id`, to decide on: a request that throws half-way changes nothing. */
    copyOf(id: string): number[] | undefined {
      return held.get(id)?.state.slice()
    },
    /**
     * Writes `states` (by id, with their algorithms) decided at `now` on the caller's clock,
     * `clockNow` on the object's. A state back to full capacity is deleted: nothing is lost.
     */
    async write(
      states: ReadonlyMap<string, readonly [Algorithm, number[]]>,
      now: number,
      clockNow: number,
    ): Promise<void> {
      const puts: Record<string, Stored> = {}
      const deletes: string[] = []
      let latest = 0
      for (const [id, [algorithm, state]] of states) {
        const freshIn = algorithm.freshAt(state, 0) - now
        if (freshIn <= 0) {
          if (held.delete(id)) deletes.push(id)
          continue
        }
        const stored = { state, freshBy: clockNow + freshIn }
        held.set(id, stored)
        puts[id] = stored
        latest = Math.max(latest, stored.freshBy)
      }
      const writes: Promise<unknown>[] = []
      if (deletes.length > 0) writes.push(storage.delete(deletes))
      if (latest > 0) writes.push(storage.put(puts))
      // One alarm at a time: one due before the last state is fresh deletes what is and sets
      // the next (expire), so a busy object does not move its alarm on every write.
      if (latest > 0 && alarmAt === null) {
        alarmAt = latest + EXPIRY_GRACE_MS
        writes.push(storage.setAlarm(alarmAt))
      }
      await Promise.all(writes)
    },
    /** The alarm: deletes the states fresh by `clockNow`, and waits for the others. */
    async expire(clockNow: number): Promise<void> {
      const deletes: string[] = []
      let latest = 0
      for (const [id, stored] of held) {
        if (stored.freshBy <= clockNow) deletes.push(id)
        else latest = Math.max(latest, stored.freshBy)
      }
      for (const id of deletes) held.delete(id)
      alarmAt = latest > 0 ? latest + EXPIRY_GRACE_MS : null
      const writes: Promise<unknown>[] = []
      if (deletes.length > 0) writes.push(storage.delete(deletes))
      if (alarmAt !== null) writes.push(storage.setAlarm(alarmAt))
      await Promise.all(writes)
    },
  }
}
