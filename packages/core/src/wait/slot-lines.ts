import type { Scheduler } from './scheduler.js'
import type {
  LineVerdict,
  MaybePromise,
  SlotQueueHost,
  SlotQueueParams,
  WaitSignal,
} from './slot-queues.js'

// The lines of `createSlotQueues` and the requests waiting in them.

type Line<Verdict extends LineVerdict> = {
  readonly id: string
  readonly params: SlotQueueParams
  readonly waiters: Waiter<Verdict>[]
  /** Cancels the line's next look for a slot given back elsewhere (shared stores only). */
  stopLooking: (() => void) | undefined
}

/**
 * The lines by rule and key, and their turns: a slot given back wakes the next waiter of its
 * line, which is decided again and settled, moved to another line or put back. Turns enter
 * lines and lines (on a shared store) wake their turns, so both are methods of one part.
 */
export class SlotLines<Verdict extends LineVerdict> {
  /** Counts releases: a request refused before the latest one may have missed its slot. */
  releases = 0
  private readonly byId = new Map<string, Line<Verdict>>()
  private readonly host: SlotQueueHost<Verdict>

  constructor(host: SlotQueueHost<Verdict>) {
    this.host = host
  }

  has(id: string): boolean {
    return this.byId.has(id)
  }

  /** Joins the line as its newest; a full line refuses it (fifo) or its oldest (lifo). */
  enter(id: string, waiter: Waiter<Verdict>): void {
    const full = this.lineAt(id)
    if (full.waiters.length >= full.params.length) {
      const refused = full.params.order === 'fifo' ? waiter : full.waiters[0]!
      refused.settle(refusal(refused.denial))
      if (refused === waiter) return
    }
    // Looked up again: the oldest leaving may have emptied (and dropped) the line.
    const line = this.lineAt(id)
    line.waiters.push(waiter)
    waiter.line = line
  }

  leave(waiter: Waiter<Verdict>): void {
    const line = waiter.line
    if (line === undefined) return
    waiter.line = undefined
    const index = line.waiters.indexOf(waiter)
    if (index >= 0) line.waiters.splice(index, 1)
    if (line.waiters.length === 0) this.drop(line)
  }

  /** The line's next waiter (its oldest, fifo, or newest, lifo) is decided again. */
  next(id: string): void {
    const line = this.byId.get(id)
    if (line === undefined) return
    const waiter = line.params.order === 'fifo' ? line.waiters.shift() : line.waiters.pop()
    if (line.waiters.length === 0) this.drop(line)
    if (waiter === undefined) return
    waiter.line = undefined
    const started = this.releases
    let outcome: MaybePromise<Verdict>
    try {
      outcome = this.host.decideAgain(waiter.denial)
    } catch (error) {
      waiter.fail(error)
      this.next(id)
      return
    }
    if (isPromise(outcome)) {
      outcome.then(
        (verdict) => this.decided(waiter, id, started, verdict),
        (error: unknown) => {
          waiter.fail(error)
          this.next(id)
        },
      )
    } else this.decided(waiter, id, started, outcome)
  }

  private decided(waiter: Waiter<Verdict>, from: string, started: number, verdict: Verdict): void {
    if (waiter.settled) {
      // Timed out or gone while decided again: a slot it took goes straight back (and on to the
      // next waiter); else the slot that woke it is the next one's.
      if (verdict.allowed) this.host.release(verdict)
      else this.next(from)
      return
    }
    if (verdict.allowed) {
      waiter.settle(verdict)
      return
    }
    const id = lineIdOf(verdict, this.host.lines)
    if (id === undefined) {
      // Refused by a rule that does not wait: answered with that refusal.
      waiter.settle(verdict)
      this.next(from)
      return
    }
    waiter.denial = verdict
    if (id !== from) {
      this.enter(id, waiter)
      this.next(from)
      return
    }
    this.putBack(id, waiter)
    // A slot came back while it was decided: it may be this one's after all.
    if (this.releases !== started) this.next(from)
  }

  /** Back to the place it was taken from: the front of a fifo line, the back of a lifo one. */
  private putBack(id: string, waiter: Waiter<Verdict>): void {
    const line = this.lineAt(id)
    if (line.params.order === 'fifo') line.waiters.unshift(waiter)
    else line.waiters.push(waiter)
    waiter.line = line
  }

  private lineAt(id: string): Line<Verdict> {
    let line = this.byId.get(id)
    if (line === undefined) {
      const params = this.host.lines.get(ruleOfLine(id))!
      line = { id, params, waiters: [], stopLooking: undefined }
      this.byId.set(id, line)
      if (this.host.shared) this.lookAgainLater(line)
    }
    return line
  }

  private drop(line: Line<Verdict>): void {
    this.byId.delete(line.id)
    line.stopLooking?.()
    line.stopLooking = undefined
  }

  /** In `lookAgainMs`, decides the line's next waiter again, and so on while the line lasts. */
  private lookAgainLater(line: Line<Verdict>): void {
    const scheduler = this.host.scheduler()
    line.stopLooking = scheduler.at(scheduler.now() + line.params.lookAgainMs, () => {
      line.stopLooking = undefined
      if (this.byId.get(line.id) !== line) return
      this.next(line.id)
      if (this.byId.get(line.id) === line && line.stopLooking === undefined) {
        this.lookAgainLater(line)
      }
    })
  }
}

/**
 * A request waiting in line: settled once, by a slot (decided again), a refusal (its line full,
 * its wait over) or its signal's abort, and then out of its line, its timer and its signal.
 */
export class Waiter<Verdict extends LineVerdict> {
  /** The latest refusal: what it is decided again from, and answered with if it stays refused. */
  denial: Verdict
  /** The line it waits in; undefined while it is decided again, and once settled. */
  line: Line<Verdict> | undefined = undefined
  settled = false
  private readonly lines: SlotLines<Verdict>
  private readonly resolve: (outcome: Verdict) => void
  private readonly reject: (reason: unknown) => void
  private readonly signal: WaitSignal | undefined
  private readonly onAbort = () => this.fail(this.signal!.reason)
  private cancelExpiry: (() => void) | undefined = undefined

  constructor(
    denial: Verdict,
    lines: SlotLines<Verdict>,
    resolve: (outcome: Verdict) => void,
    reject: (reason: unknown) => void,
    signal: WaitSignal | undefined,
  ) {
    this.denial = denial
    this.lines = lines
    this.resolve = resolve
    this.reject = reject
    this.signal = signal
  }

  /** Refused at `maxWaitMs` from now, or failed with the signal's reason when it aborts first. */
  start(scheduler: Scheduler, maxWaitMs: number): void {
    const end = scheduler.now() + maxWaitMs
    this.cancelExpiry = scheduler.at(end, () => this.settle(refusal(this.denial)))
    this.signal?.addEventListener('abort', this.onAbort, { once: true })
  }

  settle(outcome: Verdict): void {
    if (this.settled) return
    this.done()
    this.resolve(outcome)
  }

  fail(reason: unknown): void {
    if (this.settled) return
    this.done()
    this.reject(reason)
  }

  private done(): void {
    this.settled = true
    this.lines.leave(this)
    this.cancelExpiry?.()
    this.signal?.removeEventListener('abort', this.onAbort)
  }
}

/** The line a refusal waits in: that of its first refusing rule, if every one has a line. */
export function lineIdOf(
  verdict: LineVerdict,
  rules: ReadonlyMap<string, SlotQueueParams>,
): string | undefined {
  if (verdict.allowed || verdict.reason !== 'limit' || verdict.storeFailed === true) return
  let id: string | undefined
  for (const d of verdict.decisions) {
    if (d.allowed || d.mode === 'shadow') continue
    if (d.key === undefined || !rules.has(d.rule)) return undefined
    // Rule ids hold no space: the pair is unambiguous whatever the key holds.
    id ??= `${d.rule} ${d.key}`
  }
  return id
}

/** The rule of a line's id (`<rule> <key>`). */
export function ruleOfLine(id: string): string {
  return id.slice(0, id.indexOf(' '))
}

/** A refusal as answered: no longer one that waits. */
function refusal<Verdict extends LineVerdict>(verdict: Verdict): Verdict {
  return verdict.waitsForSlot === true ? { ...verdict, waitsForSlot: undefined } : verdict
}

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}
