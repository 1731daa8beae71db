import type { Scheduler } from './scheduler.js'

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

type MaybePromise<T> = T | Promise<T>

/** What `AbortSignal` offers that a wait reads. */
type WaitSignal = {
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

type Line<Verdict extends LineVerdict> = {
  readonly id: string
  readonly params: SlotQueueParams
  readonly waiters: Waiter<Verdict>[]
  /** Cancels the line's next look for a slot given back elsewhere (shared stores only). */
  stopLooking: (() => void) | undefined
}

type Waiter<Verdict extends LineVerdict> = {
  /** The latest refusal: what it is decided again from, and answered with if it stays refused. */
  denial: Verdict
  /** The line it waits in; undefined while it is decided again, and once settled. */
  line: Line<Verdict> | undefined
  settled: boolean
  readonly settle: (outcome: Verdict) => void
  readonly fail: (reason: unknown) => void
}

export function createSlotQueues<Verdict extends LineVerdict>(
  host: SlotQueueHost<Verdict>,
): SlotQueues<Verdict> {
  const lines = new Map<string, Line<Verdict>>()
  // Counts releases: a request refused before the latest one may have missed its slot.
  let epoch = 0
  const decidedAt = new WeakMap<Verdict, number>()

  /** The line a refusal waits in: that of its first refusing rule, if every one has a line. */
  function lineIdOf(verdict: Verdict): string | undefined {
    if (verdict.allowed || verdict.reason !== 'limit' || verdict.storeFailed === true) return
    let id: string | undefined
    for (const d of verdict.decisions) {
      if (d.allowed || d.mode === 'shadow') continue
      if (d.key === undefined || !host.lines.has(d.rule)) return undefined
      // Rule ids hold no space: the pair is unambiguous whatever the key holds.
      id ??= `${d.rule} ${d.key}`
    }
    return id
  }

  function lineAt(id: string): Line<Verdict> {
    let line = lines.get(id)
    if (line === undefined) {
      const params = host.lines.get(id.slice(0, id.indexOf(' ')))!
      line = { id, params, waiters: [], stopLooking: undefined }
      lines.set(id, line)
      if (host.shared) lookAgainLater(line)
    }
    return line
  }

  function drop(line: Line<Verdict>): void {
    lines.delete(line.id)
    line.stopLooking?.()
    line.stopLooking = undefined
  }

  /** In `lookAgainMs`, decides the line's next waiter again, and so on while the line lasts. */
  function lookAgainLater(line: Line<Verdict>): void {
    const scheduler = host.scheduler()
    line.stopLooking = scheduler.at(scheduler.now() + line.params.lookAgainMs, () => {
      line.stopLooking = undefined
      if (lines.get(line.id) !== line) return
      next(line.id)
      if (lines.get(line.id) === line && line.stopLooking === undefined) lookAgainLater(line)
    })
  }

  function leave(waiter: Waiter<Verdict>): void {
    const line = waiter.line
    if (line === undefined) return
    waiter.line = undefined
    const index = line.waiters.indexOf(waiter)
    if (index >= 0) line.waiters.splice(index, 1)
    if (line.waiters.length === 0) drop(line)
  }

  /** Joins the line as its newest; a full line refuses it (fifo) or its oldest (lifo). */
  function enter(id: string, waiter: Waiter<Verdict>): void {
    const full = lineAt(id)
    if (full.waiters.length >= full.params.length) {
      const refused = full.params.order === 'fifo' ? waiter : full.waiters[0]!
      refused.settle(refusal(refused.denial))
      if (refused === waiter) return
    }
    // Looked up again: the oldest leaving may have emptied (and dropped) the line.
    const line = lineAt(id)
    line.waiters.push(waiter)
    waiter.line = line
  }

  /** Back to the place it was taken from: the front of a fifo line, the back of a lifo one. */
  function putBack(id: string, waiter: Waiter<Verdict>): void {
    const line = lineAt(id)
    if (line.params.order === 'fifo') line.waiters.unshift(waiter)
    else line.waiters.push(waiter)
    waiter.line = line
  }

  function next(id: string): void {
    const line = lines.get(id)
    if (line === undefined) return
    const waiter = line.params.order === 'fifo' ? line.waiters.shift() : line.waiters.pop()
    if (line.waiters.length === 0) drop(line)
    if (waiter === undefined) return
    waiter.line = undefined
    const started = epoch
    let outcome: MaybePromise<Verdict>
    try {
      outcome = host.decideAgain(waiter.denial)
    } catch (error) {
      waiter.fail(error)
      next(id)
      return
    }
    if (isPromise(outcome)) {
      outcome.then(
        (verdict) => decided(waiter, id, started, verdict),
        (error: unknown) => {
          waiter.fail(error)
          next(id)
        },
      )
    } else decided(waiter, id, started, outcome)
  }

  function decided(waiter: Waiter<Verdict>, from: string, started: number, verdict: Verdict): void {
    if (waiter.settled) {
      // Timed out or gone while decided again: a slot it took goes straight back (and on to the
      // next waiter); else the slot that woke it is the next one's.
      if (verdict.allowed) host.release(verdict)
      else next(from)
      return
    }
    if (verdict.allowed) {
      waiter.settle(verdict)
      return
    }
    const id = lineIdOf(verdict)
    if (id === undefined) {
      // Refused by a rule that does not wait: answered with that refusal.
      waiter.settle(verdict)
      next(from)
      return
    }
    waiter.denial = verdict
    if (id !== from) {
      enter(id, waiter)
      next(from)
      return
    }
    putBack(id, waiter)
    // A slot came back while it was decided: it may be this one's after all.
    if (epoch !== started) next(from)
  }

  function mark(verdict: Verdict, at: number): Verdict {
    if (verdict.allowed || lineIdOf(verdict) === undefined) return verdict
    const marked: Verdict = { ...verdict, waitsForSlot: true as const }
    decidedAt.set(marked, at)
    return marked
  }

  return {
    mark(verdict) {
      const at = epoch
      return isPromise(verdict) ? verdict.then((settled) => mark(settled, at)) : mark(verdict, at)
    },
    wait(verdict, signal) {
      const id = lineIdOf(verdict)
      if (id === undefined) return Promise.resolve(verdict)
      const params = host.lines.get(id.slice(0, id.indexOf(' ')))!
      return new Promise<Verdict>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason)
        const scheduler = host.scheduler()
        const onAbort = () => waiter.fail(signal!.reason)
        const cancel = scheduler.at(scheduler.now() + params.maxWaitMs, () =>
          waiter.settle(refusal(waiter.denial)),
        )
        const done = () => {
          waiter.settled = true
          leave(waiter)
          cancel()
          signal?.removeEventListener('abort', onAbort)
        }
        const waiter: Waiter<Verdict> = {
          denial: verdict,
          line: undefined,
          settled: false,
          settle(outcome) {
            if (waiter.settled) return
            done()
            resolve(outcome)
          },
          fail(reason) {
            if (waiter.settled) return
            done()
            reject(reason)
          },
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        enter(id, waiter)
        // A slot came back between the refusal and now: someone in line takes it.
        if (!waiter.settled && epoch !== (decidedAt.get(verdict) ?? epoch)) next(id)
      })
    },
    released(charges) {
      epoch++
      for (const charge of charges) {
        const id = `${charge.rule} ${charge.key}`
        if (lines.has(id)) next(id)
      }
    },
  }
}

/** A refusal as answered: no longer one that waits. */
function refusal<Verdict extends LineVerdict>(verdict: Verdict): Verdict {
  return verdict.waitsForSlot === true ? { ...verdict, waitsForSlot: undefined } : verdict
}

function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}
