import type { Charge, Outcome } from '../store/types.js'
import { chargeOf } from './admitted-charges.js'
import type { CompiledRule } from './compile-rule.js'
import { failedOne } from './decide.js'
import { type Engine, isPromiseLike } from './engine.js'
import { replyWithin } from './store-deadline.js'
import type { MaybePromise, RuleDecision } from './types.js'
import { storeDecision } from './verdict.js'

// The limiter's store calls besides a request's decision: one rule for one key (`check`), and
// charges given back (`refund`, `release`). A store failure follows the rule's `onStoreError`.

/** One rule for one key, as `Limiter.check` decides it. */
export function checkOne(
  engine: Engine,
  rule: CompiledRule,
  key: string,
  cost: number,
  now: number,
): MaybePromise<RuleDecision> {
  const failed = (error: unknown) => failedOne(engine, rule, key, cost, now, error)
  // A reply is read and checked inside a try: a bad one follows the rule's onStoreError, as in
  // `decide`, rather than failing later on the response path.
  const decisionOfReply = (outcome: Outcome): RuleDecision => {
    try {
      return storeDecision(rule, outcome?.decisions?.[0], cost, key)
    } catch (error) {
      return failed(error)
    }
  }
  try {
    if (rule.penalty !== undefined) {
      return engine.penalties!.checkOne(engine, rule, key, cost, now, failed)
    }
    if (engine.consumeOne !== undefined) {
      return storeDecision(
        rule,
        engine.consumeOne(rule.id, rule.algorithm, key, cost, now),
        cost,
        key,
      )
    }
    const result = engine.store.consume([chargeOf(rule, key, cost)], now)
    return isPromiseLike(result)
      ? replyWithin(result, engine.storeTimeoutMs, 'consume').then(decisionOfReply, failed)
      : decisionOfReply(result)
  } catch (error) {
    return failed(error)
  }
}

export function refundCharges(
  engine: Engine,
  charges: readonly Charge[],
  chargedAt: number,
  now: number,
): MaybePromise<void> {
  const failed = (error: unknown) =>
    engine.reporter.storeError(
      error,
      'refund',
      charges.map((charge) => charge.rule),
    )
  try {
    const result = engine.store.refund(charges, chargedAt, now)
    // Inside the try: adopting a reply reads its `then` (or a promise's `constructor`), which
    // can throw.
    if (isPromiseLike(result)) {
      return replyWithin(result, engine.storeTimeoutMs, 'refund').then(() => undefined, failed)
    }
  } catch (error) {
    failed(error)
  }
}
