import { DEFAULT_CARRY } from '../algorithms/carried-use.js'
import { carryState } from '../algorithms/carry.js'
import { systemTimers } from '../wait/scheduler.js'
import type { CompiledRule } from './compile-rule.js'
import type { LimiterParts, LimiterSetup } from './create-limiter.js'
import { type FiguresHook, keyOf } from './decide.js'
import { figuredRules } from './figured-rule.js'
import { type FiguresCache, figuresCache } from './figures-cache.js'
import { checkFiguresOption } from './figures-option.js'
import type { Limiter, LimiterOptions } from './types.js'

/** The part, made for one limiter: how its requests are decided, and where failures are counted. */
export type FiguresOfLimiter = {
  readonly decide: FiguresHook
  /** Adds `figuresRefused` to the limiter. */
  count(limiter: Limiter): void
}

/**
 * Per-client figures (the limiter's `figures` option): a rule's limit, rate, burst or window
 * looked up per client (the plan of an API key, read from a database), remembered for the
 * source's `cacheFor`. A key whose figures change carries its state by the rule's `onChange`, in
 * the store. Pass it to `createRateLimit`'s parts as `figures: clientFigures`; `rateLimit` and
 * `createLimiter` have it.
 */
export function clientFigures(
  options: LimiterOptions,
  parts: LimiterParts,
  { byId, store, engine }: LimiterSetup,
): FiguresOfLimiter {
  const reporter = engine.reporter
  const sources = checkFiguresOption(options.figures, byId, store)
  const figured = figuredRules(options.algorithms ?? parts.algorithms)
  const timers = options.timers ?? systemTimers
  let refused = 0
  const caches = new Map<string, FiguresCache>()
  for (const [id, source] of sources) {
    caches.set(
      id,
      figuresCache({
        source,
        figured,
        timers,
        failed: ({ rule, problem }) => {
          refused++
          reporter.warnOnce(
            'WARN_FIGURES_REFUSED',
            `rule "${rule}": a client's figures (figures.${rule}.of) ${problem}; the client keeps the figures it had, or the rule's own (limiter.figuresRefused counts these)`,
          )
        },
      }),
    )
    // The rule's `onChange` as it is when the key carries: `update` may change it.
    store.carryFigures!(
      id,
      (from, slots, offset, to, now) => {
        const strategy = byId.get(id)?.rule.onChange ?? DEFAULT_CARRY[to.name]
        return carryState(from, slots, offset, to, now, strategy)
      },
      byId.get(id)!.algorithm,
      byId.get(id)!.rule.onChange,
    )
  }
  const decide: FiguresHook = (matched, facts, now, decideWith) => {
    let rules: CompiledRule[] | undefined
    let waits: Promise<void>[] | undefined
    for (let i = 0; i < matched.length; i++) {
      const rule = matched[i]!
      const cache = caches.get(rule.id)
      if (cache === undefined) continue
      rules ??= matched.slice()
      // Without its identities the request is counted by IP (or refused): the rule's own figures.
      if (!hasIdentities(rule, facts.identities)) continue
      const own = cache(rule, keyOf(rule, facts.identities)!, facts, now)
      if (!(own instanceof Promise)) rules[i] = own
      else {
        const into = rules
        waits ??= []
        waits.push(
          own.then((made) => {
            into[i] = made
          }),
        )
      }
    }
    if (rules === undefined) return undefined
    const all = rules
    return waits === undefined ? decideWith(all) : Promise.all(waits).then(() => decideWith(all))
  }
  return {
    decide,
    count(limiter) {
      Object.defineProperty(limiter, 'figuresRefused', { get: () => refused, enumerable: true })
    },
  }
}

/** Whether the request has every identity `rule` keys on (else it is counted by IP, or refused). */
function hasIdentities(
  rule: CompiledRule,
  given: Readonly<Record<string, string | undefined>>,
): boolean {
  for (const name of rule.identity) {
    const value = given[name]
    if (value === undefined || value === '') return false
  }
  return true
}
