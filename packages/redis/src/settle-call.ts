import {
  checkCost,
  checkTime,
  RateLimitError,
  type Settlement,
  wholeMs,
} from '@tollgate/core/store'
import type { CallWatch } from './call.js'
import type { RedisScriptClient } from './client.js'
import { groupBySlot } from './cross-slot.js'
import type { ChargePreparer, PreparedCharge } from './prepare.js'
import { chargeTimes } from './redis-calls.js'
import { parseSettleReply } from './reply.js'
import { everyIndex } from './request-charges.js'
import { settleScript } from './scripts/index.js'
import { luaAlgorithmNamed } from './scripts/registry.js'
import type { ResolvedOptions } from './store-options.js'

type Settle = (settlements: readonly Settlement[], chargedAt: number, now: number) => Promise<void>

/**
 * `RedisStore.settle`: a request's settlements in one call of the settle script, which applies
 * them as one unit (one call per slot group on Redis Cluster, as a refund makes: each group is
 * one unit, and a settlement decides nothing, so there is nothing to make all-or-nothing across
 * them). Every settlement is checked before anything is sent.
 */
export function settler(
  config: ResolvedOptions,
  client: RedisScriptClient,
  preparer: ChargePreparer,
  watch: CallWatch,
): Settle {
  const { serverTime, timeoutMs, margin } = config
  return async (settlements, chargedAt, now) => {
    chargedAt = wholeMs(chargedAt)
    checkTime(chargedAt)
    if (!serverTime) {
      now = wholeMs(now)
      checkTime(now)
    }
    for (const settlement of settlements) checkSettlement(settlement)
    // An actual cost equal to the estimate changes nothing: no call for it.
    const changed = settlements.filter((settlement) => settlement.actual !== settlement.cost)
    if (changed.length === 0) return
    const prepared = changed.map((settlement) => settlementArgs(preparer, settlement, now))
    const groups = client.cluster === true ? groupBySlot(prepared) : [everyIndex(changed.length)]
    const deadline = watch.deadlineIn(timeoutMs)
    await Promise.all(
      groups.map((group) => {
        const keys = group.map((index) => prepared[index]!.key)
        const args = [
          serverTime ? '-1' : String(now),
          margin,
          chargeTimes(preparer, changed, group, chargedAt),
        ]
        for (const index of group) args.push(...prepared[index]!.args)
        return watch.callScript(client, settleScript, keys, args, deadline, (reply) =>
          parseSettleReply(reply, group.length),
        )
      }),
    )
  }
}

/** A settlement's key and arguments: a charge's, with the actual cost in the shadow flag's place. */
function settlementArgs(
  preparer: ChargePreparer,
  settlement: Settlement,
  now: number,
): PreparedCharge {
  const prepared = preparer.prepare(settlement, now)
  const args = [...prepared.args]
  args[2] = String(settlement.actual)
  return { ...prepared, args }
}

/** Throws unless the scripts can settle `settlement` (see `Store.settle`). */
function checkSettlement(settlement: Settlement): void {
  const { algorithm, rule, cost, actual } = settlement
  checkCost(cost)
  if (!Number.isSafeInteger(actual) || actual < 0) {
    throw new RateLimitError(
      'ERR_RL_INVALID_COST',
      `settle: the actual cost for rule "${rule}" must be a whole number ≥ 0, got ${actual}`,
      { rule, field: 'actual' },
    )
  }
  if (
    typeof algorithm.settle !== 'function' ||
    luaAlgorithmNamed(algorithm.name)?.settle === undefined
  ) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `${algorithm.name} charges cannot be settled (rule "${rule}"): only rate and window algorithms settle`,
      { rule, field: 'settle' },
    )
  }
}
