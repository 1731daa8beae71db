/**
 * One table of HTTP scenarios, run against every adapter and transport (see adapters.test.ts),
 * in one file per concern, as docs/concepts is. Each step sends a request (after moving the
 * manual clock, if asked) and states what must come back; on top of that, every target must
 * answer every request with the same status, headers and body. Figures are worked out by hand
 * from the rules (see the comment on each step).
 */
import { ALGORITHMS_SCENARIOS } from './algorithms.js'
import { FAILURE_MODES_SCENARIOS } from './failure-modes.js'
import { HEADERS_SCENARIOS } from './headers.js'
import { KEYS_AND_PROXIES_SCENARIOS } from './keys-and-proxies.js'
import { RULES_SCENARIOS } from './rules.js'
import { SETTLE_SCENARIOS } from './settle.js'
import type { Scenario } from './support.js'

export { type Expect, type Scenario, T0 } from './support.js'

export const SCENARIOS: readonly Scenario[] = [
  ...ALGORITHMS_SCENARIOS,
  ...RULES_SCENARIOS,
  ...KEYS_AND_PROXIES_SCENARIOS,
  ...HEADERS_SCENARIOS,
  ...FAILURE_MODES_SCENARIOS,
  ...SETTLE_SCENARIOS,
]
