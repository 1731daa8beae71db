import type { Scheduler } from '../wait/scheduler.js'
import type { HoldOptions, MaybePromise, RuleDecision, Verdict } from './types.js'

/** `Limiter.hold`, for one limiter: its queued requests wait on one scheduler, made on first use. */
type Hold = (verdict: Verdict, options?: HoldOptions) => Promise<Verdict>

/**
 * Builds the limiter's `hold` of admissions that wait for their slot in a queue rule, on the
 * limiter's scheduler (none without a queue rule: nothing then waits), made when the first
 * request waits; with nothing waiting it arms no timer.
 */
export function createHold(
  schedulerOf: (() => Scheduler) | undefined,
  giveBack: (verdict: Verdict) => MaybePromise<void>,
): Hold {
  return (verdict, options) => {
    const wait = verdict.waitMs
    if (!verdict.allowed || wait === undefined || wait <= 0 || schedulerOf === undefined)
      return Promise.resolve(verdict)
    return schedulerOf()
      .sleep(wait, options?.signal)
      .then(
        () => served(verdict, wait),
        // Gone before its slot: the request was never served, so all it was charged goes back,
        // its queue slot to the next arrival.
        async (reason: unknown) => {
          await giveBack(verdict)
          throw reason
        },
      )
  }
}

/**
 * The verdict as of the moment its request leaves the queue: every time until a reset counted
 * from there (`at + waitMs`), so that the fields it is served with are current. `at` stays the
 * time of the charge, which a refund hands back to the store.
 */
function served(verdict: Verdict, waited: number): Verdict {
  const moved = new Map<RuleDecision, RuleDecision>()
  const move = (d: RuleDecision): RuleDecision => {
    let after = moved.get(d)
    if (after === undefined) {
      after = { ...d, resetAfterMs: Math.max(0, d.resetAfterMs - waited) }
      moved.set(d, after)
    }
    return after
  }
  return {
    ...verdict,
    decisions: verdict.decisions.map(move),
    deciding: verdict.deciding === undefined ? undefined : move(verdict.deciding),
    shadowDenied: verdict.shadowDenied.map(move),
  }
}
