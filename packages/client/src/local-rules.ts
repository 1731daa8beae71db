import {
  type Algorithm,
  defineRules,
  fixedWindow,
  gcra,
  leakyBucket,
  leakyQueue,
  type QueueRuleConfig,
  type RateRuleConfig,
  type Rule,
  slidingLog,
  slidingWindow,
  tokenBucket,
  type WindowRuleConfig,
} from '@tollgate/core'

type Local<T> = Omit<T, 'id' | 'match'> & {
  /** Names the rule in error messages and events. @default `local-<position>` */
  readonly id?: string
  /** Accepted, so a server's rule can be shared as is; a local limiter has one key. */
  readonly match?: RateRuleConfig['match']
}

/**
 * A rule for a local limiter, in the shape of the server's rules (`rate`/`period`/`burst` or
 * `limit`/`window`, durations such as `'1s'`), or a compiled `Algorithm` from one of the core's
 * factories. Any object that implements `Algorithm` works: the limiter needs `step`'s answer and
 * its `retryAfterMs`, and of an algorithm named `leaky_queue`, its `delayMs` (the call's slot).
 */
export type LocalRule =
  | Local<RateRuleConfig>
  | Local<QueueRuleConfig>
  | Local<WindowRuleConfig>
  | Algorithm

function isAlgorithm(rule: LocalRule): rule is Algorithm {
  return typeof (rule as Algorithm).decide === 'function'
}

/**
 * Compiles local rules through the core's rule validation, so a bad rule is refused with the
 * same messages as on the server, naming the rule and the field.
 */
export function compileLocalRules(rules: readonly LocalRule[]): Algorithm[] {
  if (rules.length === 0) {
    throw new TypeError('[@tollgate/client] Expected at least one rule for the local limiter')
  }
  const configs = rules.flatMap((rule, index) =>
    isAlgorithm(rule)
      ? []
      : [{ ...rule, id: rule.id ?? `local-${index + 1}`, match: rule.match ?? { identity: 'ip' } }],
  )
  const validated = configs.length === 0 ? [] : [...defineRules(configs as never)]
  return rules.map((rule) => (isAlgorithm(rule) ? rule : algorithmOf(validated.shift()!)))
}

function algorithmOf(rule: Rule): Algorithm {
  switch (rule.algorithm) {
    case 'token_bucket':
      return tokenBucket({ rate: rule.rate, periodMs: rule.period, burst: rule.burst })
    case 'gcra':
      return gcra({ rate: rule.rate, periodMs: rule.period, burst: rule.burst })
    case 'leaky_bucket':
      return leakyBucket({ rate: rule.rate, periodMs: rule.period, burst: rule.burst })
    case 'leaky_queue':
      return leakyQueue({
        rate: rule.rate,
        periodMs: rule.period,
        burst: rule.burst,
        delay: rule.delay,
        maxWaitMs: rule.maxWait,
      })
    case 'fixed_window':
      return typeof rule.window === 'string'
        ? fixedWindow({ limit: rule.limit, calendar: rule.window, timeZone: rule.timeZone })
        : fixedWindow({ limit: rule.limit, windowMs: rule.window })
    case 'sliding_log':
      return slidingLog({ limit: rule.limit, windowMs: rule.window as number })
    case 'sliding_window':
      return slidingWindow({
        limit: rule.limit,
        windowMs: rule.window as number,
        buckets: rule.buckets,
      })
    case 'concurrency':
      // Slots need each request's end reported; the local limiter only counts over time.
      throw new TypeError(
        `[@tollgate/client] Rule "${rule.id}": a concurrency rule limits requests in flight on a server; the local limiter takes rules over time`,
      )
  }
}
