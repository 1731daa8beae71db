import type { Scheduler } from './scheduler.js'
import { isPromise, lineIdOf, ruleOfLine, SlotLines, Waiter } from './slot-lines.js'

/** The line of a concurrency rule whose refused requests wait for a slot. */
export type SlotQueueParams = {
  /** How many may wait, per key (≥ 1). */
  readonly length: number
  readonly maxWaitMs: number
  /** Which waiting request a freed slot goes to (see `ConcurrencyParams.queueOrder`). */
  readonly order: 'fifo' | 'lifo'
  /**
   * How often a line on a store other processes share looks again for a slot one of them gave
   * back (which wakes nobody here): the rule's `retryAfterMs`, what a refusal tells a client, or
   * a quarter of `maxWaitMs` if that is shorter.
   */
  readonly lookAgainMs: number
}

/**
 * What the lines read of a limiter's verdict (its `Verdict` has these and more): typed here by
 * shape, so that waiting depends on nothing above it.
 */
export type LineVerdict = {
  readonly allowed: boolean
  readonly reason: string | undefined
  readonly storeFailed?: boolean | undefined
  readonly waitsForSlot?: true | undefined
  readonly decisions: ReadonlyArray<{
    readonly allowed: boolean
    readonly mode: string
    readonly rule: string
    readonly key?: string | undefined
  }>
}

export type MaybePromise<T> = T | Promise<T>

/** What `AbortSignal` offers that a wait reads. */
export type WaitSignal = {
  readonly aborted: boolean
  readonly reason: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

/**
 * The lines of requests waiting for a concurrency slot, one per rule and key, kept by one
 * limiter. A request its concurrency rules refused waits in the line of the first of them; each
 * slot given back wakes the next waiter of its line, which is decided again: admitted, it has
 * the slot; refused by the same rule (the slot went elsewhere), it goes back to its place;
 * refused by another rule, it is answered with that refusal and the slot goes to the one after.
 * On a store other processes share, their releases wake nobody here: a line then decides its
 * next waiter again every `lookAgainMs` too.
 */
export type SlotQueues<Verdict extends LineVerdict> = {
  /** `verdict`, marked `waitsForSlot` when its request may wait (decided before any later release). */
  readonly mark: (verdict: MaybePromise<Verdict>) => MaybePromise<Verdict>
  /**
   * Waits in line: resolves with the request decided again once a slot came, or with its
   * refusal when the line is full or its wait is over; rejects with the signal's reason when it
   * aborts first (nothing was taken, so nothing is given back).
   */
  readonly wait: (verdict: Verdict, signal: WaitSignal | undefined) => Promise<Verdict>
  /** Slots of these rules and keys came back: their lines' next waiters are decided again. */
  readonly released: (charges: readonly { readonly rule: string; readonly key: string }[]) => void
}

/** What the lines need of their limiter. */
export type SlotQueueHost<Verdict extends LineVerdict> = {
  /** The rules whose refused requests may wait, by id (enforcing concurrency rules with a queue). */
  readonly lines: ReadonlyMap<string, SlotQueueParams>
  /** The store is shared with other processes (`Store.shared`). */
  readonly shared: boolean
  readonly scheduler: () => Scheduler
  /** Decides a refused request again, under the rules and keys of its verdict. */
  readonly decideAgain: (verdict: Verdict) => MaybePromise<Verdict>
  /** Gives back the slots of an admission nobody is left to serve. */
  readonly release: (verdict: Verdict) => unknown
}

/**
 * One limiter's lines: the lines themselves (slot-lines.ts), and the three calls the limiter
 * makes on them, each built once here so that a request's call is a direct one.
 */
export function createSlotQueues<Verdict extends LineVerdict>(
  host: SlotQueueHost<Verdict>,
): SlotQueues<Verdict> {
  const lines = new SlotLines(host)
  // The release count each marked refusal was decided at (see `SlotLines.releases`).
  const decidedAt = new WeakMap<Verdict, number>()
  return {
    mark: marker(host.lines, lines, decidedAt),
    wait: waiting(host, lines, decidedAt),
    released: releaser(lines),
  }
}

/** `mark`: a refusal that may wait, marked, with the count of releases it was decided after. */
function marker<Verdict extends LineVerdict>(
  rules: SlotQueueHost<Verdict>['lines'],
  lines: SlotLines<Verdict>,
  decidedAt: WeakMap<Verdict, number>,
): SlotQueues<Verdict>['mark'] {
  const mark = (verdict: Verdict, at: number): Verdict => {
    if (verdict.allowed || lineIdOf(verdict, rules) === undefined) return verdict
    const marked: Verdict = { ...verdict, waitsForSlot: true as const }
    decidedAt.set(marked, at)
    return marked
  }
  return (verdict) => {
    const at = lines.releases
    return isPromise(verdict) ? verdict.then((settled) => mark(settled, at)) : mark(verdict, at)
  }
}

/** `wait`: a refusal with a line joins it, and stays until a slot, the end of its wait or an abort. */
function waiting<Verdict extends LineVerdict>(
  host: SlotQueueHost<Verdict>,
  lines: SlotLines<Verdict>,
  decidedAt: WeakMap<Verdict, number>,
): SlotQueues<Verdict>['wait'] {
  return (verdict, signal) => {
    const id = lineIdOf(verdict, host.lines)
    if (id === undefined) return Promise.resolve(verdict)
    const maxWaitMs = host.lines.get(ruleOfLine(id))!.maxWaitMs
    return new Promise<Verdict>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const waiter = new Waiter(verdict, lines, resolve, reject, signal)
      waiter.start(host.scheduler(), maxWaitMs)
      lines.enter(id, waiter)
      // A slot came back between the refusal and now: someone in line takes it.
      if (!waiter.settled && lines.releases !== (decidedAt.get(verdict) ?? lines.releases)) {
        lines.next(id)
      }
    })
  }
}

/** `released`: counted, and each line of a slot that came back decides its next waiter again. */
function releaser<Verdict extends LineVerdict>(
  lines: SlotLines<Verdict>,
): SlotQueues<Verdict>['released'] {
  return (charges) => {
    lines.releases++
    for (const charge of charges) {
      const id = `${charge.rule} ${charge.key}`
      if (lines.has(id)) lines.next(id)
    }
  }
}
