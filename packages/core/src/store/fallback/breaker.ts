// The circuit breaker in front of the shared store, on the time the limiter passes in (so it
// runs on injected time in tests, and sets no timer of its own).
//
// closed ──(`failures` in a row)──▶ open ──(probeIntervalMs later, next request)──▶ probing
//   ▲                                  ▲                                              │
//   └──(local admissions charged)── reconciling ◀──(the probe answered)───────────────┘
//                                      └──(a charge failed)──▶ open
// The probe charges the outage's local admissions before its own request; once it answered,
// what was admitted locally meanwhile is charged too (`reconciling`), then decisions return.

export type BreakerState = 'closed' | 'open' | 'probing' | 'reconciling'

/** What a request does with the shared store: call it, call it as the probe, or skip it. */
export type Passage = 'call' | 'probe' | 'skip'

export type Breaker = {
  readonly state: BreakerState
  passage(now: number): Passage
  /** A call failed at `now`; true when the circuit is (now) open. */
  failed(now: number): boolean
  /** A call answered. */
  answered(): void
  /**
   * The store answered with an outage to end (the probe, or a call while the circuit stayed
   * closed): decisions stay local while the rest of its admissions are charged. False when
   * another request is already doing so, or the circuit opened again meanwhile.
   */
  reconcile(): boolean
  /** The local admissions were charged to the shared store: decisions return to it. */
  reconciled(): void
}

export function createBreaker(failuresToOpen: number, probeIntervalMs: number): Breaker {
  let state: BreakerState = 'closed'
  let failures = 0
  let probeAt = 0
  const open = (now: number) => {
    state = 'open'
    probeAt = now + probeIntervalMs
  }
  return {
    get state() {
      return state
    },
    passage(now) {
      if (state === 'closed') return 'call'
      if (state === 'open' && now >= probeAt) {
        state = 'probing'
        return 'probe'
      }
      return 'skip'
    },
    failed(now) {
      if (state === 'closed' && ++failures < failuresToOpen) return false
      open(now)
      return true
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
    },
  }
}
