import type { createScheduler, Scheduler, SchedulerOptions } from './scheduler.js'
import { isPromise } from './slot-lines.js'
import type {
  createSlotQueues,
  LineVerdict,
  MaybePromise,
  SlotQueueParams,
  SlotQueues,
  WaitSignal,
} from './slot-queues.js'

// What a limiter's requests hold and wait for: the concurrency slots given back when a response
// ends (`release`), queued admissions waited out (`hold`) and the lines of requests waiting for
// a slot. Carried by the algorithms that need it (concurrency, the leaky queue), so that a
// limiter without one holds none of it; typed here by shape, so that it depends on nothing above.

/** A decision as holding reads it (the limiter's `RuleDecision` has these and more). */
type HeldDecision = {
  readonly allowed: boolean
  readonly mode: string
  readonly rule: string
  readonly key?: string | undefined
  readonly cost: number
  readonly resetAfterMs: number
  readonly storeFailed?: boolean | undefined
}

/** A verdict as holding reads it (the limiter's `Verdict` has these and more). */
export type HeldVerdict = LineVerdict & {
  readonly decisions: readonly HeldDecision[]
  readonly deciding: HeldDecision | undefined
  readonly shadowDenied: readonly HeldDecision[]
  readonly at: number
  readonly waitMs?: number | undefined
  readonly slotsReleased?: true | undefined
}

/** A rule as holding reads it: what its algorithm waits with. */
type HeldRule = {
  readonly id: string
  readonly shadow: boolean
  readonly penalty?: unknown
  readonly algorithm: {
    readonly name: string
    readonly scheduler?: typeof createScheduler | undefined
    readonly slotQueue?: SlotQueueParams | undefined
    readonly slotQueues?: typeof createSlotQueues | undefined
  }
}

/** A charge given back, as holding reads it. */
type HeldCharge = { readonly rule: string; readonly key: string }

/** The time of a call (`given.now`, else the clock's) and the engine to make it with. */
type Given = { readonly now?: number | undefined } | undefined

/** What holding needs of its limiter's setup (`createLimiter`'s own, typed here by shape). */
type HeldSetup<R extends HeldRule, E> = {
  /** The rules when the limiter is made: the lines and the scheduler come from them. */
  readonly compiled: readonly R[]
  readonly byId: ReadonlyMap<string, R>
  readonly store: { readonly shared?: boolean | undefined }
  readonly engine: E & {
    readonly reporter: {
      storeError(error: unknown, operation: 'refund', rules: string[]): void
    }
  }
}

/** The time of a call and the engine to make it with (`createLimiter`'s `timeOf`). */
type TimeOf<E> = (given: Given) => [number, E]

/** The charge of `cost` to `key` under a rule, without its penalty (`chargeOf`). */
type ChargeOf<R extends HeldRule, C extends HeldCharge> = (rule: R, key: string, cost: number) => C

/** Charges a request's rules to the store as one unit and reads the reply into a verdict. */
type ConsumeAll<V extends HeldVerdict, R extends HeldRule, C extends HeldCharge, E> = (
  engine: E,
  pending: Pending<V, R, C>,
  now: number,
) => MaybePromise<V>

/** What an admission was charged, slots only or all but slots (`admittedCharges`). */
type AdmittedCharges<V extends HeldVerdict, R extends HeldRule, C extends HeldCharge> = (
  verdict: V,
  ruleOf: (id: string) => R | undefined,
  slots: boolean,
) => C[]

/** Gives charges back to the store (`refundCharges`). */
type RefundCharges<C extends HeldCharge, E> = (
  engine: E,
  charges: readonly C[],
  chargedAt: number,
  now: number,
) => MaybePromise<void>

/**
 * A request's rules in rule order, each with its charge, or with its decision when the request
 * lacked the rule's identity (`Pending` of the limiter's `decide`).
 */
type Pending<V extends HeldVerdict, R extends HeldRule, C extends HeldCharge> = {
  readonly rules: readonly R[]
  readonly plan: readonly (C | V['decisions'][number])[]
  readonly charges: readonly C[]
  readonly penalised: boolean
}

/** The memory store's single-charge refund (`refundOne`), as holding calls it. */
type RefundOne<R extends HeldRule> = (
  rule: string,
  algorithm: R['algorithm'],
  key: string,
  cost: number,
  chargedAt: number,
  now: number,
) => void

/** What holding adds to a limiter. */
export type SlotHolding<V extends HeldVerdict> = {
  readonly release: (
    verdict: V,
    given?: { readonly now?: number | undefined },
  ) => MaybePromise<void>
  readonly hold: (verdict: V, given?: { readonly signal?: WaitSignal | undefined }) => Promise<V>
  /** Marks refusals that wait in a line for a concurrency slot, when a rule has one. */
  readonly mark: SlotQueues<V>['mark'] | undefined
}

/**
 * `release`, `hold` and the lines of requests waiting for a slot, with the scheduler everything
 * that waits shares (queued admissions, requests waiting for a slot), made on first use from the
 * first rule that waits. A release wakes the next waiter of its line, and a waiter admitted
 * after its client left is released: the lines see `release` once it is made. A refusal
 * waiting for a slot waits in its line, then a queued admission for its slot; one that is never
 * served gives back what it was charged, and its slots.
 *
 * The limiter's parts come one by one: the limiter imports the algorithms, which carry holding,
 * so holding imports none of the limiter's modules; and handed as an object, that object would
 * be built by every limiter, with a rule that holds slots or without.
 */
export function holdSlots<V extends HeldVerdict, R extends HeldRule, C extends HeldCharge, E>(
  setup: HeldSetup<R, E>,
  /**
   * The limiter's options: the scheduler is made of their `clock` and `timers` (read when it is
   * made, on first use, as `update` reads the options when it runs).
   */
  options: SchedulerOptions,
  timeOf: TimeOf<E>,
  ruleOf: (id: string) => R,
  /** Gives back what an admission was charged besides its slots (`Limiter.refund`). */
  refund: (verdict: V) => unknown,
  chargeOf: ChargeOf<R, C>,
  consumeAll: ConsumeAll<V, R, C, E>,
  admittedCharges: AdmittedCharges<V, R, C>,
  refundCharges: RefundCharges<C, E>,
): SlotHolding<V> {
  const rules = setup.compiled
  const makeScheduler = rules.find((rule) => rule.algorithm.scheduler)?.algorithm.scheduler
  let made: Scheduler | undefined
  const scheduler = makeScheduler && (() => (made ??= makeScheduler(options)))
  // The lines, when an enforcing concurrency rule has a `queue` (a shadow rule never refuses, so
  // nothing waits for it).
  const lines = new Map<string, SlotQueueParams>()
  let makeQueues: typeof createSlotQueues | undefined
  for (const rule of rules) {
    const { slotQueue, slotQueues } = rule.algorithm
    if (slotQueue === undefined || slotQueues === undefined || rule.shadow) continue
    lines.set(rule.id, slotQueue)
    makeQueues = slotQueues
  }
  const queues: SlotQueues<V> | undefined = makeQueues?.<V>({
    lines,
    shared: setup.store.shared === true,
    scheduler: () => scheduler!(),
    decideAgain: (verdict) => decideAgain(verdict, timeOf, ruleOf, chargeOf, consumeAll),
    release: (verdict) => release(verdict),
  })
  const release = releaser(setup, queues, timeOf, admittedCharges, refundCharges)
  const holdQueued = queuedHold(scheduler, (verdict: V) => {
    const refunding = refund(verdict)
    const releasing = release(verdict)
    return isPromise(refunding) || isPromise(releasing)
      ? Promise.all([refunding, releasing]).then(() => undefined)
      : undefined
  })
  const hold: SlotHolding<V>['hold'] =
    queues === undefined
      ? holdQueued
      : (verdict, given) =>
          verdict.waitsForSlot === true
            ? queues.wait(verdict, given?.signal).then((next) => holdQueued(next, given))
            : holdQueued(verdict, given)
  return { release, hold, mark: queues?.mark }
}

/**
 * Decides again a request that a concurrency rule refused, from its verdict: the rules, keys and
 * costs it was decided under (what a request waiting for a slot is decided with once one frees).
 */
function decideAgain<V extends HeldVerdict, R extends HeldRule, C extends HeldCharge, E>(
  verdict: V,
  timeOf: TimeOf<E>,
  ruleOf: (id: string) => R,
  chargeOf: ChargeOf<R, C>,
  consumeAll: ConsumeAll<V, R, C, E>,
): MaybePromise<V> {
  const [now, engine] = timeOf(undefined)
  const rules: R[] = []
  const plan: (C | V['decisions'][number])[] = []
  const charges: C[] = []
  let penalised = false
  for (const d of verdict.decisions) {
    const rule = ruleOf(d.rule)
    rules.push(rule)
    if (d.key === undefined) {
      plan.push(d)
      continue
    }
    const penalty = rule.penalty
    const charge = { ...chargeOf(rule, d.key, d.cost), penalty }
    plan.push(charge)
    charges.push(charge)
    if (penalty !== undefined) penalised = true
  }
  const pending: Pending<V, R, C> = { rules, plan, charges, penalised }
  return consumeAll(engine, pending, now)
}

/** A verdict as `release` marks it: its slots came back once (see `Verdict.slotsReleased`). */
type Releasable = { slotsReleased?: true | undefined }

/**
 * `Limiter.release`. A verdict is marked released on itself (no set to keep it in: a set costs
 * as much as the rest of the release); a verdict of one concurrency rule on the memory store
 * gives its slot back through the store's `refundOne`, without building a charge list.
 */
function releaser<V extends HeldVerdict, R extends HeldRule, C extends HeldCharge, E>(
  setup: HeldSetup<R, E>,
  queues: SlotQueues<V> | undefined,
  timeOf: TimeOf<E>,
  admittedCharges: AdmittedCharges<V, R, C>,
  refundCharges: RefundCharges<C, E>,
): SlotHolding<V>['release'] {
  const { byId, engine } = setup
  const ruleOf = (id: string) => byId.get(id)
  const store = setup.store as { refundOne?: RefundOne<R> }
  const refundOne = typeof store.refundOne === 'function' ? store.refundOne.bind(store) : undefined
  return function release(verdict, given) {
    if (!verdict.allowed || verdict.storeFailed === true || verdict.slotsReleased === true) return
    const decisions = verdict.decisions
    if (decisions.length === 1 && refundOne !== undefined && given?.now === undefined) {
      const d = decisions[0]!
      const rule = byId.get(d.rule)
      if (rule === undefined || rule.algorithm.name !== 'concurrency') return
      if (!d.allowed || d.cost === 0 || d.key === undefined || d.storeFailed === true) return
      ;(verdict as Releasable).slotsReleased = true
      try {
        // Slots come back whatever the time: no clock read.
        refundOne(rule.id, rule.algorithm, d.key, d.cost, verdict.at, verdict.at)
      } catch (error) {
        engine.reporter.storeError(error, 'refund', [rule.id])
        return
      }
      queues?.released([{ rule: rule.id, key: d.key }])
      return
    }
    const charges = admittedCharges(verdict, ruleOf, true)
    if (charges.length === 0) return
    ;(verdict as Releasable).slotsReleased = true
    // Slots come back whatever the time: no clock read, unless a time is given.
    const [now, releasing] = given?.now === undefined ? [verdict.at, engine] : timeOf(given)
    const done = refundCharges(releasing, charges, verdict.at, now)
    if (queues === undefined) return done
    // Back in the store first: the next in line is decided against it.
    if (!isPromise(done)) return queues.released(charges)
    return done.then(() => queues.released(charges))
  }
}

/**
 * `hold` of admissions that wait for their slot in a queue rule, on the limiter's scheduler
 * (none without a queue rule: nothing then waits), made when the first request waits; with
 * nothing waiting it arms no timer.
 */
function queuedHold<V extends HeldVerdict>(
  schedulerOf: (() => Scheduler) | undefined,
  giveBack: (verdict: V) => MaybePromise<void>,
): SlotHolding<V>['hold'] {
  return (verdict, options) => {
    const wait = verdict.waitMs
    if (!verdict.allowed || wait === undefined || wait <= 0 || schedulerOf === undefined)
      return Promise.resolve(verdict)
    return schedulerOf()
      .sleep(wait, options?.signal)
      .then(
        () => served(verdict, wait),
        // Gone before its slot: the request was never served, so all it was charged goes back,
        // its queue slot to the next arrival.
        async (reason: unknown) => {
          await giveBack(verdict)
          throw reason
        },
      )
  }
}

/**
 * The verdict as of the moment its request leaves the queue: every time until a reset counted
 * from there (`at + waitMs`), so that the fields it is served with are current. `at` stays the
 * time of the charge, which a refund hands back to the store.
 */
function served<V extends HeldVerdict>(verdict: V, waited: number): V {
  const moved = new Map<HeldDecision, HeldDecision>()
  const move = (d: HeldDecision): HeldDecision => {
    let after = moved.get(d)
    if (after === undefined) {
      after = { ...d, resetAfterMs: Math.max(0, d.resetAfterMs - waited) }
      moved.set(d, after)
    }
    return after
  }
  return {
    ...verdict,
    decisions: verdict.decisions.map(move),
    deciding: verdict.deciding === undefined ? undefined : move(verdict.deciding),
    shadowDenied: verdict.shadowDenied.map(move),
  }
}
