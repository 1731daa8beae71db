import {
  type AlgorithmState,
  checkCost,
  createScheduler,
  RateLimitError,
  type Scheduler,
  type SchedulerOptions,
  step,
} from '@tollgate/core'
import { compileLocalRules, type LocalRule } from './local-rules.js'

/**
 * A limiter for outbound calls (Go's `rate.Limiter`: `Allow`, `Wait`, `Reserve`), counting with
 * the core's exact integer algorithms. A call passes when every rule admits it; waiting calls
 * are served first come, first served, from one timer for the whole queue.
 */
export type LocalLimiter = {
  /** Takes `cost` now if every rule has it and nobody is queued; never waits. @default cost 1 */
  readonly tryAcquire: (cost?: number) => boolean
  /**
   * Takes `cost` as soon as every rule has it, after the calls queued before it. Rejects with
   * the signal's reason if it aborts while waiting (nothing is taken), and with
   * `ERR_RL_COST_EXCEEDS_CAPACITY` for a cost no rule could ever admit.
   */
  readonly acquire: (options?: AcquireOptions) => Promise<void>
  /** Ms until a call of `cost` queued now would pass (0: at once). Takes nothing. */
  readonly reserve: (cost?: number) => number
  /** How many calls are waiting. */
  readonly queued: () => number
}

export type AcquireOptions = {
  /** Units this call spends. @default 1 */
  readonly cost?: number | undefined
  readonly signal?: AbortSignal | undefined
}

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
}

/**
 * @example
 * const vendor = localLimiter({ algorithm: 'token_bucket', rate: 10, period: '1s', burst: 10 })
 * await vendor.acquire({ signal })
 */
export function localLimiter(
  rules: LocalRule | readonly LocalRule[],
  options: LocalLimiterOptions = {},
): LocalLimiter {
  const algorithms = compileLocalRules(Array.isArray(rules) ? rules : [rules as LocalRule])
  const scheduler = options.scheduler ?? createScheduler(options)
  let states: (AlgorithmState | undefined)[] = algorithms.map(() => undefined)
  const queue: Waiter[] = []
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

  /** 0 and the states after the charge when every rule admits `cost` at `now`; else the wait. */
  function attempt(from: readonly (AlgorithmState | undefined)[], cost: number, now: number) {
    const next: AlgorithmState[] = []
    let wait = 0
    for (let i = 0; i < algorithms.length; i++) {
      const { state, decision } = step(algorithms[i]!, from[i], cost, now)
      next.push(state)
      if (!decision.allowed) wait = Math.max(wait, 1, decision.retryAfterMs ?? 1)
    }
    return { wait, next }
  }

  function pump(): void {
    cancelWake?.()
    cancelWake = undefined
    const now = scheduler.now()
    while (queue.length > 0) {
      const head = queue[0]!
      const { wait, next } = attempt(states, head.cost, now)
      if (wait > 0) {
        cancelWake = scheduler.at(now + wait, pump)
        return
      }
      states = next
      queue.shift()
      head.signal?.removeEventListener('abort', head.onAbort)
      head.resolve()
    }
  }

  return {
    tryAcquire(cost = 1) {
      checkedCost(cost)
      if (queue.length > 0) return false
      const { wait, next } = attempt(states, cost, scheduler.now())
      if (wait > 0) return false
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
            const position = queue.indexOf(waiter)
            if (position >= 0) queue.splice(position, 1)
            reject(signal!.reason)
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
      for (const spend of [...queue.map((waiter) => waiter.cost), cost]) {
        for (;;) {
          const { wait, next } = attempt(simulated, spend, time)
          if (wait === 0) {
            simulated = next
            break
          }
          time += wait
        }
      }
      return time - now
    },
    queued: () => queue.length,
  }
}
