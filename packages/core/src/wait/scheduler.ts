import type { Clock } from '../clock.js'

/** The timer functions a scheduler arms: the runtime's `setTimeout` and `clearTimeout`, or a test's. */
export type Timers = {
  /** Arms a timer; its handle is passed back to `clearTimeout` as it is. */
  readonly setTimeout: (callback: () => void, ms: number) => unknown
  /** Disarms a timer `setTimeout` armed. */
  readonly clearTimeout: (handle: unknown) => void
}

// Reached structurally: core compiles without DOM or Node types. Every runtime we support has
// timers and `AbortSignal`.
const runtime = globalThis as unknown as Timers

/** The runtime's timers, looked up when called, so that fake timers installed later apply. */
export const systemTimers: Timers = {
  setTimeout: (callback, ms) => runtime.setTimeout(callback, ms),
  clearTimeout: (handle) => runtime.clearTimeout(handle),
}

/** What the scheduler reads of an `AbortSignal`. */
type AbortSignal = {
  readonly aborted: boolean
  readonly reason: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

/**
 * Everything that waits (a queued request, a request waiting for a concurrency slot, a client's
 * retry) is an entry of one scheduler, and one timer is armed for the earliest entry: waiting
 * costs no timer per call, and with nothing waiting no timer is armed at all, so nothing keeps a
 * process or an edge isolate alive.
 */
export type Scheduler = {
  /** The clock's time in whole ms. */
  readonly now: () => number
  /**
   * Runs `run` at `time` (ms on the clock) or soon after, in order of time, then of arrival.
   * Returns a function that cancels it (a no-op once it ran). O(log n) in the entries waiting.
   */
  readonly at: (time: number, run: () => void) => () => void
  /** Resolves at `time`; rejects with the signal's reason when it aborts first. */
  readonly until: (time: number, signal?: AbortSignal | undefined) => Promise<void>
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  readonly sleep: (ms: number, signal?: AbortSignal | undefined) => Promise<void>
  /** How many entries wait (cancelled ones not counted). */
  readonly waiting: () => number
}

/**
 * Options of `createScheduler`: the clock it reads and the timers it arms (a test passes fakes).
 */
export type SchedulerOptions = {
  /** @default `Date.now` */
  readonly clock?: Clock | undefined
  /** @default the runtime's `setTimeout` and `clearTimeout` */
  readonly timers?: Timers | undefined
}

/** setTimeout's delay is a signed 32-bit number of ms: a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647

type Entry = { readonly at: number; readonly seq: number; run: (() => void) | undefined }

/** True when `a` runs before `b`. */
const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq)

/**
 * A `Scheduler`: one timer, armed for the earliest of any number of waits. For a store or tool that
 * waits as the limiter does; `Limiter` has its own.
 * @example
 * const scheduler = createScheduler()
 * await scheduler.sleep(250, request.signal) // rejects with the reason if the request is aborted
 */
export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const clock = options.clock ?? { now: () => Date.now() }
  const timers = options.timers ?? systemTimers
  // A binary min-heap. A cancelled entry stays in it with `run` cleared until it reaches the
  // top, or until cancelled entries outnumber live ones and the heap is rebuilt without them.
  let heap: Entry[] = []
  let live = 0
  let seq = 0
  let armed: { at: number; handle: unknown } | undefined

  const now = () => Math.max(0, Math.floor(clock.now()))

  function push(entry: Entry): void {
    let index = heap.push(entry) - 1
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (!before(entry, heap[parent]!)) break
      heap[index] = heap[parent]!
      index = parent
    }
    heap[index] = entry
  }

  function pop(): Entry {
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) siftDown(last, 0)
    return top
  }

  function siftDown(entry: Entry, from: number): void {
    let index = from
    for (;;) {
      let child = 2 * index + 1
      if (child >= heap.length) break
      if (child + 1 < heap.length && before(heap[child + 1]!, heap[child]!)) child++
      if (!before(heap[child]!, entry)) break
      heap[index] = heap[child]!
      index = child
    }
    heap[index] = entry
  }

  function dropCancelledTop(): void {
    while (heap.length > 0 && heap[0]!.run === undefined) pop()
  }

  function compact(): void {
    const kept = heap.filter((entry) => entry.run !== undefined)
    heap = []
    for (const entry of kept) push(entry)
  }

  function arm(): void {
    dropCancelledTop()
    const first = heap[0]
    if (armed !== undefined && first !== undefined && armed.at === first.at) return
    if (armed !== undefined) timers.clearTimeout(armed.handle)
    armed = undefined
    if (first === undefined) return
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, first.at - now()))
    armed = { at: first.at, handle: timers.setTimeout(fire, delay) }
  }

  function fire(): void {
    armed = undefined
    const time = now()
    const due: Array<() => void> = []
    for (dropCancelledTop(); heap.length > 0 && heap[0]!.at <= time; dropCancelledTop()) {
      const entry = pop()
      due.push(entry.run!)
      entry.run = undefined
      live--
    }
    // Re-armed first: a timer that fired early (or was capped at MAX_TIMER_MS) waits again, and
    // an entry that throws does not stop the others or the timer.
    arm()
    let failure: { error: unknown } | undefined
    for (const run of due) {
      try {
        run()
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure !== undefined) throw failure.error
  }

  function at(time: number, run: () => void): () => void {
    const entry: Entry = { at: time, seq: seq++, run }
    push(entry)
    live++
    arm()
    return () => {
      if (entry.run === undefined) return
      entry.run = undefined
      live--
      if (heap.length > 64 && heap.length > 2 * live) compact()
      arm()
    }
  }

  function until(time: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const onAbort = () => {
        cancel()
        reject(signal!.reason)
      }
      const cancel = at(time, () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      })
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  return {
    now,
    at,
    until,
    sleep: (ms, signal) => until(now() + Math.max(0, ms), signal),
    waiting: () => live,
  }
}
