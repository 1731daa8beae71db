/** The time a rule itself takes to admit calls, the yardstick of the client's closed loop. */
import { localLimiter } from '@tollgate/client'
import type { RuleConfig } from '@tollgate/express'
import { manualClock } from '@tollgate/test-utils'

/** The rules over time (a concurrency rule has no rate to learn). */
export type TimeRule = Exclude<RuleConfig, { algorithm: 'concurrency' }>

/** Ms the rule takes to admit `calls` calls sent each the moment it would pass. */
export function idealMs(rule: TimeRule, start: number, calls: number): number {
  const clock = manualClock(start)
  const rules = localLimiter(rule, { clock, timers: { setTimeout: () => 0, clearTimeout() {} } })
  for (let i = 0; i < calls; i++) {
    clock.advance(rules.reserve())
    if (!rules.tryAcquire()) throw new Error('the greedy schedule was refused')
  }
  return clock.now() - start
}

/**
 * 1.2 × the ideal for every algorithm, plus what `t` in whole seconds costs once: nothing comes
 * back before `t` says for a fixed window (nor, the first time, for a sliding window counter),
 * and `t` rounds a reset 1 ms away up to a second. A run that starts on a window boundary loses
 * nothing to it; one that starts 999 ms into a window loses almost the whole next second, which
 * no client can win back from the fields alone.
 */
export const RATIO = 1.2
export const ROUNDING_MS = 1000
