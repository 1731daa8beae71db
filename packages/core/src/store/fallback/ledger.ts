import type { Charge } from '../types.js'
import { countsSince, spanOf } from './share.js'

// What this process admitted locally during an outage, by rule and key, in time bins: what is
// charged to the shared store when it answers again, so that the outage hands nobody a fresh
// allowance. Bounded in keys; bins older than the rule's reset span are dropped as they age.

/** Bins per reset span: a unit is placed at most 1/16 of the span early (stricter, not looser). */
const BINS = 16

type Entry = {
  readonly charge: Charge
  /** Bin width in ms. */
  readonly width: number
  /** Units admitted, by bin index (time ÷ width). */
  readonly bins: Map<number, number>
}

/** A rule and key's units that still count when the store answers again. */
export type Owed = { readonly charge: Charge; readonly units: number }

export type Ledger = {
  /** Records `units` admitted locally at `at` under the (unshared) charge. */
  add(charge: Charge, units: number, at: number): void
  /**
   * Takes back `units` admitted at `at` (a refund of a local admission): false, taking nothing,
   * when the ledger holds no such admission (the charge was made in the shared store).
   */
  take(charge: Charge, units: number, at: number): boolean
  /** Empties the ledger: every rule and key's units that still count at `now`. */
  drain(now: number): Owed[]
  readonly keys: number
  /** Keys not recorded because the ledger was full (their units are not reconciled). */
  readonly dropped: number
}

export function createLedger(maxKeys: number): Ledger {
  let entries = new Map<string, Entry>()
  let dropped = 0
  const idOf = (charge: Charge) => `${charge.rule}\n${charge.key}`
  const entryOf = (charge: Charge, create: boolean): Entry | undefined => {
    const id = idOf(charge)
    let entry = entries.get(id)
    if (entry === undefined && create) {
      if (entries.size >= maxKeys) {
        dropped++
        return undefined
      }
      entry = { charge, width: Math.ceil(spanOf(charge.algorithm) / BINS), bins: new Map() }
      entries.set(id, entry)
    }
    return entry
  }
  return {
    add(charge, units, at) {
      const entry = entryOf(charge, true)
      if (entry === undefined || units <= 0) return
      const bin = Math.floor(at / entry.width)
      entry.bins.set(bin, (entry.bins.get(bin) ?? 0) + units)
      // Bins that no longer count are dropped as new ones come: at most BINS + 2 per key.
      if (entry.bins.size > BINS + 2) prune(entry, at)
    },
    take(charge, units, at) {
      const entry = entryOf(charge, false)
      if (entry === undefined) return false
      const bin = Math.floor(at / entry.width)
      const held = entry.bins.get(bin) ?? 0
      if (held < units) return false
      if (held > units) entry.bins.set(bin, held - units)
      else entry.bins.delete(bin)
      return true
    },
    drain(now) {
      const owed: Owed[] = []
      for (const entry of entries.values()) {
        prune(entry, now)
        let units = 0
        for (const value of entry.bins.values()) units += value
        if (units > 0) owed.push({ charge: entry.charge, units })
      }
      entries = new Map()
      return owed
    },
    get keys() {
      return entries.size
    },
    get dropped() {
      return dropped
    },
  }
}

/** Drops the bins that end before the rule's units stop counting (a bin that straddles stays). */
function prune(entry: Entry, now: number): void {
  const since = countsSince(entry.charge.algorithm, now)
  for (const bin of entry.bins.keys()) {
    if ((bin + 1) * entry.width <= since) entry.bins.delete(bin)
  }
}
