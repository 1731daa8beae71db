import { checkCost, checkTime, wholeTime } from '../algorithms/step.js'
import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import type { PenaltyBook } from './penalty-book.js'
import type {
  Charge,
  KeyRef,
  KeyStatus,
  Offences,
  Outcome,
  PenalisedOutcome,
  Penalty,
} from './types.js'

/** What the memory store lends its penalty and operator methods. */
export type MemoryInternals = {
  consume(charges: readonly Charge[], now: number): Outcome
  /** A dry run of `cost` on the key at `now`: nothing written, a key not held not created. */
  look(rule: string, algorithm: Algorithm, key: string, cost: number, now: number): Decision
  /** Drops the key's state under the rule. */
  forget(rule: string, algorithm: Algorithm, key: string): void
  /** The book of offences, made on first use: a store without penalised rules holds none. */
  book(): PenaltyBook
}

/** `Store`'s penalty and operator methods, answered synchronously. */
type PenaltyMethods = {
  consumePenalised(charges: readonly Charge[], now: number): PenalisedOutcome
  peek(ref: KeyRef, penalty: Penalty | undefined, now: number): KeyStatus
  reset(ref: KeyRef, now: number): void
  block(ref: KeyRef, penalty: Penalty, until: number, now: number): void
  unblock(ref: KeyRef, now: number): void
}

/** The memory store's `consumePenalised` and operator methods (see `Store`). */
export function memoryPenalties(store: MemoryInternals): PenaltyMethods {
  return {
    consumePenalised(charges, now) {
      now = wholeTime(now)
      for (const charge of charges) checkCost(charge.cost, charge.algorithm.limit)
      const book = store.book()
      const offences: (Offences | undefined)[] = charges.map((charge) =>
        charge.penalty === undefined ? undefined : book.read(charge.rule, charge.key, now),
      )
      const blocked = charges.some(
        (charge, i) => !charge.shadow && (offences[i]?.blockedUntil ?? 0) > now,
      )
      if (blocked) {
        // Refused without charging, as a denied request: a charge that would pass is reported
        // at cost 0 (what is left), one that would not with its retry.
        const decisions = charges.map(({ rule, algorithm, key, cost }) => {
          const tried = store.look(rule, algorithm, key, cost, now)
          return tried.allowed && cost > 0 ? store.look(rule, algorithm, key, 0, now) : tried
        })
        return { decisions, at: now, offences }
      }
      const outcome = store.consume(charges, now)
      outcome.decisions.forEach((decision, i) => {
        const { penalty, shadow, rule, key } = charges[i]!
        if (penalty === undefined || shadow || decision.allowed) return
        offences[i] = book.offend(rule, key, penalty, now)
      })
      return { decisions: outcome.decisions, at: outcome.at, offences }
    },
    peek(ref, penalty, now) {
      now = wholeTime(now)
      const decision = store.look(ref.rule, ref.algorithm, ref.key, 0, now)
      const offences = penalty === undefined ? undefined : store.book().read(ref.rule, ref.key, now)
      return { decision, offences, at: now }
    },
    reset(ref) {
      store.forget(ref.rule, ref.algorithm, ref.key)
      store.book().forget(ref.rule, ref.key)
    },
    block(ref, penalty, until, now) {
      now = wholeTime(now)
      checkTime(until)
      store.book().block(ref.rule, ref.key, penalty, until, now)
    },
    unblock(ref) {
      store.book().forget(ref.rule, ref.key)
    },
  }
}
