import { DEFAULT_SLOT_WAIT_MS } from '../algorithms/concurrency.js'
import type { Clock } from '../clock.js'
import type { HoldOptions, Limiter, RequestFacts, RuleDecision, Verdict } from '../limiter/types.js'
import type { Rule } from '../rules/types.js'
import type { ObservedEventType } from './events.js'
import type { Emit } from './fan-out.js'

/**
 * Tells a request's verdict to the observers (its rule events, its slots, its decision event);
 * `waited`: the rules whose slot it waited for and then got (`queued`).
 */
export type Tell = (
  verdict: Verdict,
  facts: RequestFacts | undefined,
  waited?: ReadonlySet<string>,
) => void

/** The slots one admitted request holds, by concurrency rule. */
type Taken = ReadonlyArray<readonly [rule: string, units: number]>

/** What an observed limiter tells of queue waits and concurrency slots. */
export type Holdings = {
  /** An admitted verdict took slots (told once per verdict, as the store took them). */
  readonly decided: (verdict: Verdict) => void
  /**
   * A refusal that may wait for a slot (`waitsForSlot`): told when its wait ends, by `hold`,
   * as what it ends in (ASP.NET Core counts a queued request once, at the end of its wait).
   */
  readonly mayWait: (verdict: Verdict, facts: RequestFacts | undefined) => void
  /** `limiter.hold`, telling the wait's start and end. */
  readonly hold: (limiter: Limiter, verdict: Verdict, options?: HoldOptions) => Promise<Verdict>
  /** The verdict's slots were given back (told once, however often `release` is called). */
  readonly released: (verdict: Verdict) => void
}

/**
 * Follows what a limiter's requests hold, as the limiter does: the slots of its concurrency
 * rules from admission to `release`, and a queue rule's wait from `hold` to the slot. Slots are
 * counted as the limiter counts them: a verdict's, once, whether released once or twice; the
 * verdict `hold` serves holds the slots of the one it was given.
 */
export function holdings(
  rules: readonly Rule[],
  clock: Clock,
  emit: Emit,
  wants: (type: ObservedEventType) => boolean,
  tell: Tell,
): Holdings {
  const concurrency = new Set(rules.filter((r) => r.algorithm === 'concurrency').map((r) => r.id))
  const countsSlots = concurrency.size > 0 && wants('concurrency.slots')
  const waitsFor = new Map<string, number>()
  for (const rule of rules) {
    if (rule.algorithm === 'concurrency' && (rule.queue ?? 0) > 0 && rule.mode === 'enforce') {
      waitsFor.set(rule.id, rule.maxWait ?? DEFAULT_SLOT_WAIT_MS)
    }
  }
  const waitingRules = waitsFor.size > 0 || rules.some((r) => r.algorithm === 'leaky_queue')
  const countsWaits = waitingRules && wants('queue.wait')
  const held = new WeakMap<Verdict, Taken>()
  // The facts of each refusal that may wait, told with the verdict its wait ends in.
  const mayWaitFacts = new WeakMap<Verdict, RequestFacts | undefined>()

  function decided(verdict: Verdict): void {
    if (!countsSlots || !verdict.allowed || verdict.storeFailed === true) return
    let taken: Array<readonly [string, number]> | undefined
    for (const d of verdict.decisions) {
      // What `release` gives back: an admitted, charged, really decided concurrency charge.
      if (!concurrency.has(d.rule) || !d.allowed || d.cost === 0 || d.key === undefined) continue
      if (d.storeFailed === true) continue
      taken ??= []
      taken.push([d.rule, d.cost])
      emit({ type: 'concurrency.slots', rule: d.rule, change: d.cost })
    }
    if (taken !== undefined) held.set(verdict, taken)
  }

  function released(verdict: Verdict): void {
    const taken = held.get(verdict)
    if (taken === undefined) return
    held.delete(verdict)
    for (const [rule, units] of taken) emit({ type: 'concurrency.slots', rule, change: -units })
  }

  /**
   * Waits for a slot: `queue.wait` of the line's rule from `waiting` (`ms` the most it may
   * wait) to `served`, `refused` (no slot came in time, the line was full, or another rule
   * refused it when decided again) or `abandoned`; then the verdict it ends in is told, the
   * rules it waited for being `queued` when it got its slot. A request whose client went away
   * is told with the refusal it waited from.
   */
  function holdForSlot(limiter: Limiter, verdict: Verdict, options?: HoldOptions) {
    const facts = mayWaitFacts.get(verdict)
    mayWaitFacts.delete(verdict)
    const refusing = new Set<string>()
    for (const d of verdict.decisions) if (d.mode === 'enforce' && !d.allowed) refusing.add(d.rule)
    const [line] = refusing
    const rule = countsWaits && line !== undefined && waitsFor.has(line) ? line : undefined
    const start = rule === undefined ? undefined : timeOn(clock)
    if (rule !== undefined)
      emit({ type: 'queue.wait', rule, state: 'waiting', ms: waitsFor.get(rule)! })
    const ended = (state: 'served' | 'refused' | 'abandoned') => {
      if (rule === undefined) return
      const end = start === undefined ? undefined : timeOn(clock)
      const ms = start === undefined || end === undefined ? 0 : Math.max(0, end - start)
      emit({ type: 'queue.wait', rule, state, ms })
    }
    return limiter.hold(verdict, options).then(
      (served) => {
        ended(served.allowed ? 'served' : 'refused')
        tell(served, facts, served.allowed ? refusing : undefined)
        return served
      },
      (reason: unknown) => {
        ended('abandoned')
        tell(verdict, facts)
        throw reason
      },
    )
  }

  function hold(limiter: Limiter, verdict: Verdict, options?: HoldOptions): Promise<Verdict> {
    if (verdict.waitsForSlot === true) return holdForSlot(limiter, verdict, options)
    const wait = verdict.waitMs
    if (!verdict.allowed || wait === undefined || wait <= 0) return limiter.hold(verdict, options)
    const rule = countsWaits ? queueRuleOf(verdict.decisions) : undefined
    const start = rule === undefined ? undefined : timeOn(clock)
    if (rule !== undefined) emit({ type: 'queue.wait', rule, state: 'waiting', ms: wait })
    const waited = (fallback: number) => {
      const end = start === undefined ? undefined : timeOn(clock)
      return start === undefined || end === undefined ? fallback : Math.max(0, end - start)
    }
    return limiter.hold(verdict, options).then(
      (served) => {
        const taken = held.get(verdict)
        if (taken !== undefined) {
          held.delete(verdict)
          held.set(served, taken)
        }
        if (rule !== undefined)
          emit({ type: 'queue.wait', rule, state: 'served', ms: waited(wait) })
        return served
      },
      (reason: unknown) => {
        if (rule !== undefined)
          emit({ type: 'queue.wait', rule, state: 'abandoned', ms: waited(0) })
        throw reason
      },
    )
  }

  return {
    decided,
    mayWait: (verdict, facts) => mayWaitFacts.set(verdict, facts),
    hold,
    released,
  }
}

/** The enforcing queue rule with the longest delay (the first of equals): the one waited for. */
function queueRuleOf(decisions: readonly RuleDecision[]): string | undefined {
  let found: RuleDecision | undefined
  for (const d of decisions) {
    if (d.mode !== 'enforce' || !d.allowed || (d.delayMs ?? 0) <= 0) continue
    if (found === undefined || d.delayMs! > found.delayMs!) found = d
  }
  return found?.rule
}

/** The clock's time, or undefined when it fails or reads nonsense (the wait is then as given). */
function timeOn(clock: Clock): number | undefined {
  try {
    const now = clock.now()
    return typeof now === 'number' && Number.isFinite(now) ? now : undefined
  } catch {
    return undefined
  }
}
