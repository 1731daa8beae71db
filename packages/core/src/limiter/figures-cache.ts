import type { Timers } from '../wait/scheduler.js'
import type { CompiledRule } from './compile-rule.js'
import { isPromiseLike } from './engine.js'
import type { FiguredRules } from './figured-rule.js'
import type { CheckedSource, FiguresClient } from './figures-option.js'
import { messageOf } from './report.js'
import type { RequestFacts } from './types.js'

/*
 * One rule's per-client figures, looked up and remembered: each client's for `cacheFor` on the
 * limiter's clock, at most `maxClients` of them (the oldest looked up dropped first), one lookup
 * at a time per client (requests arriving while it runs wait for the same one). A lookup that
 * fails leaves the client with the figures it had (the rule's own when it had none), and is
 * tried again after at most RETRY_MS.
 */

/** How soon a failed lookup is tried again (sooner when `cacheFor` is shorter). */
const RETRY_MS = 5000

type Entry = {
  /** The last figures given (undefined: the rule's own), and the rule they were made for. */
  figures: unknown
  base: CompiledRule
  figured: CompiledRule
  /** Until when (ms, the limiter's clock) they are used without a lookup. */
  until: number
  pending: Promise<CompiledRule> | undefined
}

/** How a lookup failed, for the warning: thrown or rejected, timed out, or bad figures. */
type FiguresFailure = { readonly rule: string; readonly problem: string }

export type FiguresCacheHost = {
  readonly source: CheckedSource
  readonly figured: FiguredRules
  readonly timers: Timers
  readonly failed: (failure: FiguresFailure) => void
}

/** The rule a client is decided under: synchronously when remembered, else once looked up. */
export type FiguresCache = (
  rule: CompiledRule,
  key: string,
  facts: RequestFacts,
  now: number,
) => CompiledRule | Promise<CompiledRule>

export function figuresCache({ source, figured, timers, failed }: FiguresCacheHost): FiguresCache {
  const entries = new Map<string, Entry>()

  /** Remembers `figures` for `id` from `now`, or keeps the last ones when they are refused. */
  function settle(id: string, rule: CompiledRule, figures: unknown, now: number): CompiledRule {
    const made = figured(rule, figures)
    if (typeof made === 'string')
      return fail(id, rule, `gave figures the rule refuses: ${made}`, now)
    remember(id, {
      figures,
      base: rule,
      figured: made,
      until: now + source.cacheForMs,
      pending: undefined,
    })
    return made
  }

  function fail(id: string, rule: CompiledRule, problem: string, now: number): CompiledRule {
    failed({ rule: rule.id, problem })
    const last = entries.get(id)
    const kept = last === undefined ? rule : current(last, rule)
    const retry = now + Math.min(source.cacheForMs, RETRY_MS)
    remember(id, {
      figures: last?.figures,
      base: rule,
      figured: kept,
      until: retry,
      pending: undefined,
    })
    return kept
  }

  function remember(id: string, entry: Entry): void {
    // Deleted first, so that the map's order is the order of the lookups: the oldest goes first.
    entries.delete(id)
    if (entries.size >= source.maxClients) entries.delete(entries.keys().next().value!)
    entries.set(id, entry)
  }

  /** The entry's figures for `rule` as it is now (a rule changed by `update` compiles them anew). */
  function current(entry: Entry, rule: CompiledRule): CompiledRule {
    if (entry.base === rule) return entry.figured
    const made = figured(rule, entry.figures)
    entry.base = rule
    entry.figured = typeof made === 'string' ? rule : made
    return entry.figured
  }

  function lookUp(id: string, rule: CompiledRule, key: string, facts: RequestFacts, now: number) {
    let given: ReturnType<CheckedSource['of']>
    try {
      given = source.of(clientOf(rule, key, facts))
      if (!isPromiseLike(given)) return settle(id, rule, given, now)
    } catch (error) {
      return fail(id, rule, `threw: ${messageOf(error)}`, now)
    }
    const pending = within(given, source.timeoutMs, timers).then(
      (figures) => settle(id, rule, figures, now),
      (error: unknown) => fail(id, rule, messageOf(error), now),
    )
    const last = entries.get(id)
    if (last === undefined) {
      remember(id, { figures: undefined, base: rule, figured: rule, until: -1, pending })
    } else last.pending = pending
    return pending
  }

  return (rule, key, facts, now) => {
    // The plan is part of what is remembered: another plan is looked up at once (an upgrade).
    const plan = facts.plan
    const id = plan === undefined ? key : `${key}\u0000${plan}`
    const entry = entries.get(id)
    if (entry === undefined) return lookUp(id, rule, key, facts, now)
    if (entry.pending !== undefined) return entry.pending
    if (now < entry.until) return current(entry, rule)
    return lookUp(id, rule, key, facts, now)
  }
}

/** What the lookup is given: the rule, the key and the values of the identities it keys on. */
function clientOf(rule: CompiledRule, key: string, facts: RequestFacts): FiguresClient {
  const identities: Record<string, string> = {}
  for (const name of rule.identity) identities[name] = facts.identities[name]!
  return { rule: rule.id, key, identities, plan: facts.plan }
}

/** The lookup's answer, or a rejection once `ms` have passed without one. */
function within<T>(given: PromiseLike<T>, ms: number, timers: Timers): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = timers.setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
    // A Node timer keeps the process alive; this one must not delay a shutdown.
    ;(timer as { unref?: () => void } | undefined)?.unref?.()
    Promise.resolve(given).then(
      (value) => {
        timers.clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        timers.clearTimeout(timer)
        reject(error)
      },
    )
  })
}
