import {
  type Algorithm,
  type AlgorithmState,
  checkCost,
  createScheduler,
  RateLimitError,
  refuseUnknownOptions,
  type Scheduler,
  type SchedulerOptions,
  step,
} from '@tollgate/core/store'
import { LocalQueueRefusedError } from './local-queue-refused.js'
import { compileLocalRules, type LocalRule } from './local-rules.js'

/**
 * A limiter for outbound calls (Go's `rate.Limiter`: `Allow`, `Wait`, `Reserve`), counting with
 * the core's exact integer algorithms. A call passes when every rule admits it; waiting calls
 * are served first come, first served, from one timer for the whole queue. A `leaky_queue` rule
 * shapes: it admits a call into its line with a slot (the decision's `delayMs`), and the call
 * passes when its slot comes; a call it cannot seat (the line is full, or the slot lies beyond
 * `maxWait`) is refused with a `LocalQueueRefusedError`, never waited out.
 */
export type LocalLimiter = {
  /**
   * Takes `cost` now if every rule has it, nobody is queued before it and no queue rule would
   * make it wait for a slot (with `delay`/`nodelay`, the calls served at once pass); never
   * waits. @default cost 1
   */
  readonly tryAcquire: (cost?: number) => boolean
  /**
   * Takes `cost` as soon as every rule has it, after the calls queued before it, then waits for
   * its queue rules' slot. Rejects with the signal's reason if it aborts while waiting: before
   * its charge nothing is taken; once seated, its queue slots go back and the calls behind it
   * move up (what the other rules counted stays spent, as the call was admitted). Rejects with a
   * `LocalQueueRefusedError` when a queue rule has no slot for it, and with
   * `ERR_RL_COST_EXCEEDS_CAPACITY` for a cost no rule could ever admit.
   */
  readonly acquire: (options?: AcquireOptions) => Promise<void>
  /**
   * Ms until a call of `cost` queued now would pass (0: at once), its queue slot included.
   * `Infinity` when a queue rule would refuse it. Takes nothing.
   */
  readonly reserve: (cost?: number) => number
  /** How many calls are waiting (for the rules, or seated in a queue rule's line). */
  readonly queued: () => number
}

/**
 * Options of `LocalLimiter.acquire`: what the call spends, and the signal that cancels its wait.
 */
export type AcquireOptions = {
  /** Units this call spends. @default 1 */
  readonly cost?: number | undefined
  readonly signal?: AbortSignal | undefined
}

/** Options of `localLimiter`: its clock and timers, or a scheduler shared with other limiters. */
export type LocalLimiterOptions = SchedulerOptions & {
  /** Share one scheduler (and so one timer) between limiters and clients. */
  readonly scheduler?: Scheduler | undefined
}

type Waiter = {
  readonly cost: number
  readonly resolve: () => void
  readonly reject: (reason: unknown) => void
  readonly signal: AbortSignal | undefined
  readonly onAbort: () => void
  /** Once seated in the queue rules' lines: when it was charged and when each rule releases it. */
  seat?: { readonly chargedAt: number; readonly releases: number[]; cancel: () => void }
}

type Attempt = {
  /** Ms to wait before a rule over time admits the call (0: admitted). */
  readonly wait: number
  readonly next: AlgorithmState[]
  /** Per queue rule: ms until the call's slot. */
  readonly delays: number[]
  /** A queue rule that refuses the call, and when it would have room. */
  readonly refused: { readonly rule: number; readonly retryAfterMs: number } | undefined
}

const isQueue = (algorithm: Algorithm) => algorithm.name === 'leaky_queue'

/**
 * @example
 * const vendor = localLimiter({ algorithm: 'token_bucket', rate: 10, period: '1s', burst: 10 })
 * await vendor.acquire({ signal })
 */
export function localLimiter(
  rules: LocalRule | readonly LocalRule[],
  options: LocalLimiterOptions = {},
): LocalLimiter {
  refuseUnknownOptions(options, ['clock', 'timers', 'scheduler'], 'localLimiter()')
  const list: readonly LocalRule[] = Array.isArray(rules) ? rules : [rules as LocalRule]
  const algorithms = compileLocalRules(list)
  const ids = list.map((rule, i) => ('id' in rule && rule.id) || `local-${i + 1}`)
  const queues = algorithms.flatMap((algorithm, i) => (isQueue(algorithm) ? [i] : []))
  const scheduler = options.scheduler ?? createScheduler(options)
  let states: (AlgorithmState | undefined)[] = algorithms.map(() => undefined)
  const queue: Waiter[] = []
  /** Calls seated in the queue rules' lines, in the order they were seated. */
  const seated: Waiter[] = []
  let cancelWake: (() => void) | undefined

  function checkedCost(cost: number): number {
    checkCost(cost)
    const tightest = algorithms.find((algorithm) => cost > algorithm.limit)
    if (tightest !== undefined) {
      throw new RateLimitError(
        'ERR_RL_COST_EXCEEDS_CAPACITY',
        `a cost of ${cost} can never pass a rule whose capacity is ${tightest.limit}`,
        { field: 'cost' },
      )
    }
    return cost
  }

  /** The states after charging `cost` at `now` when every rule admits it; else why not. */
  function attempt(from: readonly (AlgorithmState | undefined)[], cost: number, now: number) {
    const next: AlgorithmState[] = []
    let wait = 0
    let refused: Attempt['refused']
    const delays: number[] = []
    for (let i = 0; i < algorithms.length; i++) {
      const { state, decision } = step(algorithms[i]!, from[i], cost, now)
      next.push(state)
      if (isQueue(algorithms[i]!)) {
        delays.push(decision.delayMs ?? 0)
        if (!decision.allowed) refused ??= { rule: i, retryAfterMs: decision.retryAfterMs ?? 0 }
      } else if (!decision.allowed) wait = Math.max(wait, 1, decision.retryAfterMs ?? 1)
    }
    // A queue rule decides once the rules over time admit the call: until then it holds no seat.
    return { wait, next, delays, refused: wait > 0 ? undefined : refused } satisfies Attempt
  }

  function finish(waiter: Waiter): void {
    waiter.signal?.removeEventListener('abort', waiter.onAbort)
    waiter.resolve()
  }

  /** Releases a seated `waiter` at its latest slot, one scheduler entry per call. */
  function releaseAtSlot(waiter: Waiter): () => void {
    return scheduler.at(Math.max(...waiter.seat!.releases), () => {
      seated.splice(seated.indexOf(waiter), 1)
      finish(waiter)
    })
  }

  /** Seats `waiter`, charged at `chargedAt`, until its slots (releases[k]: queue rule k's). */
  function seat(waiter: Waiter, chargedAt: number, releases: number[]): void {
    waiter.seat = { chargedAt, releases, cancel: () => undefined }
    waiter.seat.cancel = releaseAtSlot(waiter)
    seated.push(waiter)
  }

  function pump(): void {
    cancelWake?.()
    cancelWake = undefined
    const now = scheduler.now()
    while (queue.length > 0) {
      const head = queue[0]!
      const { wait, next, delays, refused } = attempt(states, head.cost, now)
      if (wait > 0) {
        cancelWake = scheduler.at(now + wait, pump)
        return
      }
      queue.shift()
      if (refused !== undefined) {
        head.signal?.removeEventListener('abort', head.onAbort)
        head.reject(new LocalQueueRefusedError(ids[refused.rule]!, refused.retryAfterMs))
        continue
      }
      states = next
      if (delays.every((delay) => delay === 0)) finish(head)
      else
        seat(
          head,
          now,
          delays.map((delay) => now + delay),
        )
    }
  }

  /**
   * A seated call left: every queue rule takes back its slot and the slots of those seated after
   * it, then seats those again in order, so each moves up by the slot given back.
   */
  function unseat(waiter: Waiter): void {
    waiter.seat!.cancel()
    const position = seated.indexOf(waiter)
    seated.splice(position, 1)
    const behind = seated.slice(position)
    const now = scheduler.now()
    queues.forEach((rule, k) => {
      const algorithm = algorithms[rule]!
      const slots = [...states[rule]!]
      for (const leaving of [...behind].reverse().concat(waiter)) {
        algorithm.refund(slots, 0, leaving.cost, leaving.seat!.chargedAt, now)
      }
      let state: AlgorithmState = slots
      for (const moving of behind) {
        const result = step(algorithm, state, moving.cost, now)
        state = result.state
        moving.seat!.releases[k] = now + (result.decision.delayMs ?? 0)
      }
      states[rule] = state
    })
    for (const moving of behind) {
      moving.seat!.cancel()
      moving.seat!.cancel = releaseAtSlot(moving)
    }
  }

  return {
    tryAcquire(cost = 1) {
      checkedCost(cost)
      if (queue.length > 0) return false
      const { wait, next, delays, refused } = attempt(states, cost, scheduler.now())
      if (wait > 0 || refused !== undefined || delays.some((delay) => delay > 0)) return false
      states = next
      return true
    },
    acquire(acquireOptions = {}) {
      return new Promise<void>((resolve, reject) => {
        const cost = checkedCost(acquireOptions.cost ?? 1)
        const signal = acquireOptions.signal
        if (signal?.aborted) return reject(signal.reason)
        const waiter: Waiter = {
          cost,
          resolve,
          reject,
          signal,
          onAbort: () => {
            reject(signal!.reason)
            if (waiter.seat !== undefined) return unseat(waiter)
            const position = queue.indexOf(waiter)
            if (position >= 0) queue.splice(position, 1)
            if (position === 0) pump() // the next in line may pass now
          },
        }
        queue.push(waiter)
        signal?.addEventListener('abort', waiter.onAbort, { once: true })
        if (queue.length === 1) pump()
      })
    },
    reserve(cost = 1) {
      checkedCost(cost)
      const now = scheduler.now()
      let time = now
      let simulated: readonly (AlgorithmState | undefined)[] = states
      const spends = [...queue.map((waiter) => waiter.cost), cost]
      for (const [index, spend] of spends.entries()) {
        for (;;) {
          const { wait, next, delays, refused } = attempt(simulated, spend, time)
          if (wait > 0) {
            time += wait
            continue
          }
          const last = index === spends.length - 1
          if (refused !== undefined && last) return Number.POSITIVE_INFINITY
          if (refused === undefined) simulated = next // a refused call ahead takes nothing
          if (last) return time + Math.max(0, ...delays) - now
          break
        }
      }
      return time - now
    },
    queued: () => queue.length + seated.length,
  }
}
