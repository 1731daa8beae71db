import { monitorEventLoopDelay } from 'node:perf_hooks'

/** Options of `eventLoopDelay`. */
export type EventLoopDelayOptions = {
  /** How finely the delay is sampled, in ms. @default 10 */
  readonly resolutionMs?: number
}

/**
 * Node's event-loop delay as a shedding signal (`shed.eventLoopDelay`), as @fastify/under-pressure
 * reads it: each call returns the 99th percentile of the delay since the previous call, in ms,
 * from `monitorEventLoopDelay`. The Express and Koa adapters make one by themselves when
 * `shed.maxEventLoopDelayMs` is given; give it to Hono on Node.
 * @example rateLimit(rules, { shed: { maxEventLoopDelayMs: 200, eventLoopDelay: eventLoopDelay() } })
 */
export function eventLoopDelay(options: EventLoopDelayOptions = {}): () => number {
  const histogram = monitorEventLoopDelay({ resolution: options.resolutionMs ?? 10 })
  histogram.enable()
  return () => {
    const p99 = histogram.percentile(99) / 1e6
    histogram.reset()
    return Number.isFinite(p99) ? p99 : 0
  }
}
