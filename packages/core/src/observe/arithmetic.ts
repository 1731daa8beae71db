import type { RuleDecision } from '../limiter/types.js'
import type { Rule } from '../rules/types.js'

/**
 * The arithmetic behind a decision's `remaining`, `retryAfterMs` and `resetAfterMs`, in words
 * and figures, from the rule's own terms (rate per period and burst, or limit per window).
 */
export function arithmeticOf(rule: Rule, d: RuleDecision): string {
  if (d.storeFailed === true) {
    return d.allowed
      ? "the store failed and onStoreError is 'open': admitted without counting"
      : `the store failed and onStoreError is 'closed': denied, retry after ${d.retryAfterMs} ms (storeErrorRetryAfterMs)`
  }
  if (d.key === undefined) {
    return `the request has no ${rule.match.identity.join(' or ')} and onMissingIdentity is 'deny': sending it is the only way through`
  }
  const parts: string[] = []
  if ('burst' in rule) {
    const every = rule.period / rule.rate
    const what = rule.algorithm === 'leaky_bucket' ? 'drains' : 'refills'
    parts.push(
      `${rule.algorithm}: burst ${rule.burst}, ${rule.rate} per ${rule.period} ms, so one unit ${what} every ${round(every)} ms`,
    )
    if (d.allowed) {
      parts.push(`charged ${d.cost}: ${d.remaining} whole units left`)
    } else {
      parts.push(
        `needs ${d.cost}, has ${d.remaining} whole: the missing ${d.cost - d.remaining} (less the part already accrued) take ${d.retryAfterMs} ms at ${round(every)} ms each`,
      )
    }
    parts.push(
      `full again in ${d.resetAfterMs} ms = ${d.limit - d.remaining} units x ${round(every)} ms, less the part accrued`,
    )
    return parts.join('; ')
  }
  if (!('window' in rule)) {
    const slots = d.allowed
      ? `took a slot: ${d.remaining} of ${rule.limit} free until a response ends`
      : `all ${rule.limit} slots in use: retry after ${d.retryAfterMs} ms`
    return `${rule.algorithm}: at most ${rule.limit} in flight; ${slots}`
  }
  const used = d.limit - d.remaining
  const over =
    rule.algorithm === 'fixed_window'
      ? 'the window ends'
      : rule.algorithm === 'sliding_log'
        ? 'enough of the requests counted leave the last window'
        : "the weighted count (the previous window's share still overlapping plus the current window's) has room"
  const window = typeof rule.window === 'number' ? `${rule.window} ms` : `calendar ${rule.window}`
  parts.push(`${rule.algorithm}: ${rule.limit} per ${window}`)
  if (d.allowed) parts.push(`charged ${d.cost}: ${used} of ${d.limit} counted, ${d.remaining} left`)
  else {
    parts.push(
      `needs ${d.cost}, ${d.remaining} left of ${d.limit}: retry after ${d.retryAfterMs} ms, when ${over}`,
    )
  }
  parts.push(`back to ${d.limit} in ${d.resetAfterMs} ms`)
  return parts.join('; ')
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000
}
