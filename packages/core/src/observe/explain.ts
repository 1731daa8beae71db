import type { RuleDecision, Verdict } from '../limiter/types.js'
import type { Rule, RuleMode } from '../rules/types.js'
import { arithmeticOf } from './arithmetic.js'
import type { DecisionEvent, Observer, RuleOutcome } from './events.js'
import { outcomeOf } from './outcomes.js'
import { displayKey, identityNamesOf, type KeyDisplay } from './redact.js'

/** Why one rule decided a request as it did. */
export type RuleExplanation = {
  readonly rule: string
  readonly mode: RuleMode
  readonly outcome: RuleOutcome
  /** Why the rule matched the request: its match clause, e.g. `route POST /login`. */
  readonly matched: string
  /** The identities the rule keys on, and those the key was built from (`ip` on a fallback). */
  readonly keysOn: readonly string[]
  readonly usedIdentity: readonly string[]
  /** The key, hashed or redacted unless `keys: 'revealed'`; undefined without an identity. */
  readonly key: string | undefined
  /** Units this request was charged (0 when the request was denied, by this rule or another). */
  readonly charged: number
  readonly remaining: number
  readonly limit: number
  readonly retryAfterMs: number | undefined
  readonly resetAfterMs: number
  /** The arithmetic behind `remaining`, `retryAfterMs` and `resetAfterMs`, in words. */
  readonly arithmetic: string
}

/** Why a request got its verdict: every rule that matched it, in rule order. */
export type Explanation = {
  readonly allowed: boolean
  readonly reason: Verdict['reason']
  /** The rule whose figures the response carries. */
  readonly deciding: string | undefined
  readonly at: number
  /** True when the store failed: a fail-open verdict then has no rules to explain. */
  readonly storeFailed: boolean
  readonly rules: readonly RuleExplanation[]
}

/** Options of `explain` and `onDecision`: how keys are shown. */
export type ExplainOptions = {
  /** How keys are shown. @default 'hashed' (see `displayKey`) */
  readonly keys?: KeyDisplay
}

/**
 * Explains a verdict against the rules that made it (`limiter.rules`). Costs nothing until
 * called: the limiter keeps no explanation of its own.
 * @example
 * const verdict = await limiter.decide(facts)
 * console.log(explain(verdict, limiter.rules).rules.map((rule) => rule.arithmetic))
 */
export function explain(
  verdict: Verdict,
  rules: readonly Rule[],
  options: ExplainOptions = {},
): Explanation {
  const keys = options.keys ?? 'hashed'
  const byId = new Map(rules.map((rule) => [rule.id, rule] as const))
  return {
    allowed: verdict.allowed,
    reason: verdict.reason,
    deciding: verdict.deciding?.rule,
    at: verdict.at,
    storeFailed: verdict.storeFailed === true,
    rules: verdict.decisions.flatMap((d) => {
      const rule = byId.get(d.rule)
      return rule === undefined ? [] : [explainRule(rule, d, verdict.allowed, keys)]
    }),
  }
}

function explainRule(
  rule: Rule,
  d: RuleDecision,
  requestAllowed: boolean,
  keys: KeyDisplay,
): RuleExplanation {
  const charged = requestAllowed && d.allowed && d.storeFailed !== true ? d.cost : 0
  const arithmetic = arithmeticOf(rule, d)
  return {
    rule: rule.id,
    mode: rule.mode,
    outcome: outcomeOf(d, rule.algorithm === 'concurrency'),
    matched: matchOf(rule),
    keysOn: rule.match.identity,
    usedIdentity: d.key === undefined ? [] : identityNamesOf(d.key),
    key: displayKey(d.key, keys),
    charged,
    remaining: d.remaining,
    limit: d.limit,
    retryAfterMs: d.retryAfterMs,
    resetAfterMs: d.resetAfterMs,
    arithmetic:
      d.allowed && !requestAllowed
        ? `${arithmetic}; nothing was taken: another rule denied the request`
        : arithmetic,
  }
}

function matchOf(rule: Rule): string {
  const { method, route, plan } = rule.match
  const parts: string[] = []
  if (method !== undefined) parts.push(`method ${method.join('|')}`)
  if (route !== undefined) parts.push(`route ${route.join(' | ')}`)
  if (plan !== undefined) parts.push(`plan ${plan.join('|')}`)
  return parts.length === 0 ? 'every request' : parts.join(', ')
}

/**
 * An observer that explains every request's verdict to `handler` (the `onDecision` hook): build
 * it only when you want explanations, since each one is built on the request's path.
 * @example
 * observedLimiter({ rules, observers: [onDecision((why) => log.debug(why))] })
 */
export function onDecision(
  handler: (explanation: Explanation, event: DecisionEvent) => void,
  options: ExplainOptions = {},
): Observer {
  if (typeof handler !== 'function') {
    throw new TypeError(`onDecision(): expected a function, got ${typeof handler}`)
  }
  let rules: readonly Rule[] = []
  // The rules a verdict is explained against, by id: a rule changed while running is explained
  // by its new figures from then on.
  const know = (known: readonly Rule[]) => {
    const ids = new Set(known.map((rule) => rule.id))
    rules = [...rules.filter((rule) => !ids.has(rule.id)), ...known]
  }
  return {
    events: ['decision', 'rules.update'],
    attach(limiter) {
      know(limiter.rules)
    },
    observe(event) {
      if (event.type === 'decision') handler(explain(event.verdict, rules, options), event)
      else if (event.type === 'rules.update' && event.outcome === 'applied') know(event.rules)
    },
  }
}
