// The circuit breaker in front of the shared store, on the time the limiter passes in (so it
// runs on injected time in tests, and sets no timer of its own).
//
//  closed ──(`failures` in a row)──▶ open ──(probeIntervalMs on, a request)──▶ first probe
//    ▲                                ▲ ▲                                          │ answered
//    │                  (failed)──────┘ └─────(failed)───┐                         ▼
//    └──(answered; local admissions charged)── probe ◀──(probeIntervalMs on)── confirming
//
// Each instance learns on its own that the store is back. The first probe charges the store
// what this instance admitted locally and is still decided locally; decisions return to the
// store only one probe interval later, by when every other instance with traffic has probed
// and charged its own admissions too: none is then decided by a store missing others' counts.

export type BreakerState = 'closed' | 'open' | 'confirming' | 'probing' | 'reconciling'

/** What a request does with the shared store. */
type Passage = 'call' | 'first-probe' | 'probe' | 'skip'

export type Breaker = {
  readonly state: BreakerState
  passage(now: number): Passage
  /** A call failed at `now`; true when the circuit is (now) open. */
  failed(now: number): boolean
  /** The first probe answered: decisions stay local for one more probe interval. */
  confirming(now: number): void
  /** A call answered. */
  answered(): void
  /**
   * The store answered with an outage to end (the last probe, or a call while the circuit
   * stayed closed): decisions stay local while the rest of its admissions are charged. False
   * when another request is already doing so, or the circuit opened again meanwhile.
   */
  reconcile(): boolean
  /** The local admissions were charged to the shared store: decisions return to it. */
  reconciled(): void
}

export function createBreaker(failuresToOpen: number, probeIntervalMs: number): Breaker {
  let state: BreakerState = 'closed'
  let failures = 0
  let probeAt = 0
  let confirmed = false
  const waitFor = (next: BreakerState, now: number) => {
    state = next
    probeAt = now + probeIntervalMs
  }
  return {
    get state() {
      return state
    },
    passage(now) {
      if (state === 'closed') return 'call'
      if ((state === 'open' || state === 'confirming') && now >= probeAt) {
        state = 'probing'
        return confirmed ? 'probe' : 'first-probe'
      }
      return 'skip'
    },
    failed(now) {
      if (state === 'closed' && ++failures < failuresToOpen) return false
      confirmed = false
      waitFor('open', now)
      return true
    },
    confirming(now) {
      confirmed = true
      waitFor('confirming', now)
    },
    answered() {
      if (state === 'closed') failures = 0
    },
    reconcile() {
      if (state !== 'probing' && state !== 'closed') return false
      state = 'reconciling'
      return true
    },
    reconciled() {
      state = 'closed'
      failures = 0
      confirmed = false
    },
  }
}
