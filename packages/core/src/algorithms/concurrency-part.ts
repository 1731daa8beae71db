import { WEB_RESPONSE_END } from '../web-response-end.js'
import { type ConcurrencyParams, concurrency as tableConcurrency } from './concurrency.js'
import type { WithRuleFields } from './rule-fields.js'
import type { Algorithm } from './types.js'

// `concurrency` as an app names it: the built-in table's factory, carrying for the adapter kit
// what a request holding a slot needs of the response (that it be followed to its end). Its own
// module, so that what reaches only the table (createLimiter) bundles none of it, and a
// middleware composed without concurrency none either.

/**
 * Concurrency: counts requests in flight instead of requests over time. State: [units held].
 * A request is admitted while `held + cost ≤ limit` and holds its cost until it is given back
 * (`refund`, which the limiter's `release` calls when the response ends): time frees nothing.
 *
 * **Pro:** protects a resource whose cost is the time a request holds it (a slow report, a
 * database pool), whoever calls. **Con:** a slot is only as good as its release; the adapters
 * release on every way a response ends.
 * @example concurrency({ limit: 4 }) // four reports at once
 */
export const concurrency: (params: ConcurrencyParams) => Algorithm = /* @__PURE__ */ carrying({
  // A slot is held until the response has been sent: a fetch runtime's adapter follows the
  // response to its end with these (`AdapterKit.responseEnd`).
  responseEnd: WEB_RESPONSE_END,
})

/** The table's factory as one of its own, with the same rule fields, carrying `carried`. */
function carrying<C extends object>(carried: C) {
  return Object.assign(
    (params: ConcurrencyParams) => tableConcurrency(params),
    { ruleFields: (tableConcurrency as WithRuleFields<typeof tableConcurrency>).ruleFields },
    carried,
  )
}
