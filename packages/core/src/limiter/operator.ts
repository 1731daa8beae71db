import { checkCost } from '../algorithms/step.js'
import { RateLimitError } from '../errors.js'
import { invalidOption, shown } from '../options/option-values.js'
import { toMilliseconds } from '../rules/duration.js'
import type { KeyRef, KeyStatus, Store } from '../store/types.js'
import type { CompiledRule } from './compile-rule.js'
import { isPromiseLike } from './engine.js'
import { type OperatorParts, operatorPartsOf } from './operator-parts.js'
import type {
  KeyReport,
  Limiter,
  LimiterOperations,
  MaybePromise,
  OperatorOptions,
} from './types.js'
import { storeDecision } from './verdict.js'

// The operator's calls on one client (an admin route's): each one store call, on the store's
// optional methods, refused when the store has none. Store errors reach the caller as they are.
// Reached only through `limiterOperations(limiter)`: an app that never calls it bundles none of
// this; the limiter registers what the calls need (`registerOperatorParts`), a few bytes.

type OptionalMethod = 'peek' | 'reset' | 'block' | 'unblock'

/**
 * The operator's calls over a limiter made by `createLimiter` (or an adapter's, given the
 * limiter): `peek`, `reset`, `giveBack`, `block` and `unblock` one client under one rule.
 * Throws `ERR_RL_INVALID_OPTION` for anything else.
 * @example
 * const ops = limiterOperations(limiter)
 * await ops.block('ip:203.0.113.7', 'login', '15m')
 */
export function limiterOperations(limiter: Limiter): LimiterOperations {
  const parts = operatorPartsOf(limiter)
  if (parts === undefined) {
    throw invalidOption('limiter', 'expected a limiter made by createLimiter')
  }
  return createOperations(parts)
}

function createOperations({ store, ruleOf, reader }: OperatorParts): LimiterOperations {
  // The `now` given, or the clock's; a clock that fails throws (an operator hears of it).
  const nowOf = (given: OperatorOptions | undefined): number => {
    const now = reader.read(given?.now)
    const failure = reader.engine.failure
    if (failure !== undefined) throw failure
    return now
  }
  const method = <M extends OptionalMethod>(name: M): NonNullable<Store[M]> => {
    const found = store[name]
    if (typeof found === 'function') return found.bind(store) as NonNullable<Store[M]>
    throw new RateLimitError(
      'ERR_RL_STORE_UNSUPPORTED',
      `the store has no ${name} method: this store does not support ${name} yet (the memory store does)`,
      { field: 'store' },
    )
  }
  const refOf = (key: string, rule: CompiledRule): KeyRef => {
    if (typeof key !== 'string' || key === '') {
      throw invalidOption('key', `expected a store key such as 'ip:203.0.113.7', got ${shown(key)}`)
    }
    return { rule: rule.id, algorithm: rule.algorithm, key }
  }
  return {
    peek(key, ruleId, given) {
      const peek = method('peek')
      const rule = ruleOf(ruleId)
      const status = peek(refOf(key, rule), rule.penalty, nowOf(given))
      return then(status, (reply) => report(rule, key, reply))
    },
    reset(key, ruleId, given) {
      const rule = ruleOf(ruleId)
      return method('reset')(refOf(key, rule), nowOf(given))
    },
    giveBack(key, ruleId, units, given) {
      const rule = ruleOf(ruleId)
      const ref = refOf(key, rule)
      checkCost(units)
      const now = nowOf(given)
      // Given back as if charged now: from what the current window or bucket holds.
      const charge = { ...ref, cost: units, shadow: rule.shadow }
      return store.refund([charge], now, now)
    },
    block(key, ruleId, duration, given) {
      const block = method('block')
      const rule = ruleOf(ruleId)
      const ref = refOf(key, rule)
      if (rule.penalty === undefined) {
        throw new RateLimitError(
          'ERR_RL_INVALID_RULE',
          `rule "${rule.id}" has no penalty: blocks are kept and checked only under a rule with one (add penalty: { block: '1m' })`,
          { rule: rule.id, field: 'penalty' },
        )
      }
      const now = nowOf(given)
      return block(ref, rule.penalty, now + durationMs(duration), now)
    },
    unblock(key, ruleId, given) {
      const rule = ruleOf(ruleId)
      return method('unblock')(refOf(key, rule), nowOf(given))
    },
  }
}

/** A block's length: a duration with its unit, or whole ms ≥ 1. */
function durationMs(duration: unknown): number {
  if (typeof duration === 'number' && Number.isSafeInteger(duration) && duration >= 1) {
    return duration
  }
  const ms = typeof duration === 'number' ? undefined : toMilliseconds(duration)
  if (typeof ms === 'number') return ms
  throw invalidOption(
    'duration',
    `expected a duration such as '15m', or whole ms ≥ 1, got ${shown(duration)}`,
  )
}

function report(rule: CompiledRule, key: string, status: KeyStatus): KeyReport {
  const decision = storeDecision(rule, status?.decision, 0, key)
  const offences = status.offences
  const blocked = offences !== undefined && offences.blockedUntil > status.at
  return {
    decision,
    offences: offences?.count ?? 0,
    blockedUntil: blocked ? offences.blockedUntil : undefined,
    at: status.at,
  }
}

function then<T, U>(value: MaybePromise<T>, next: (value: T) => U): MaybePromise<U> {
  return isPromiseLike(value) ? Promise.resolve(value).then(next) : next(value)
}
