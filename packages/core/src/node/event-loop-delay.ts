/** Options of `eventLoopDelay`. */
export type EventLoopDelayOptions = {
  /** How finely the delay is sampled, in ms. @default 10 */
  readonly resolutionMs?: number
}

/** What is used of Node's `perf_hooks` histogram (core is typed without Node's types). */
type DelayHistogram = {
  enable(): boolean
  reset(): void
  percentile(percentile: number): number
}

type PerfHooks = {
  monitorEventLoopDelay(options: { resolution: number }): DelayHistogram
}

/**
 * Node's event-loop delay as a shedding signal (`shed.eventLoopDelay`), as @fastify/under-pressure
 * reads it: each call returns the 99th percentile of the delay since the previous call, in ms,
 * from `monitorEventLoopDelay`. The Express and Koa adapters make one by themselves when
 * `maxEventLoopDelayMs` is given; give it to Hono on Node. `perf_hooks` is reached through
 * `process.getBuiltinModule` (Node 20.16 and later), never imported, so that a bundle for another
 * runtime that holds this entry (Hono's reads its header check) needs no Node module.
 * @example rateLimit(rules, { shed: loadShedder({ maxEventLoopDelayMs: 200, eventLoopDelay: eventLoopDelay() }) })
 */
export function eventLoopDelay(options: EventLoopDelayOptions = {}): () => number {
  const process = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } })
    .process
  const hooks = process?.getBuiltinModule?.('node:perf_hooks') as PerfHooks | undefined
  if (hooks === undefined) {
    throw new TypeError(
      '[tollgate] eventLoopDelay: this runtime has no perf_hooks (Node 20.16 or later needed); give shed an eventLoopDelay of your own, or shed on maxInFlight',
    )
  }
  const histogram = hooks.monitorEventLoopDelay({ resolution: options.resolutionMs ?? 10 })
  histogram.enable()
  return () => {
    const p99 = histogram.percentile(99) / 1e6
    histogram.reset()
    return Number.isFinite(p99) ? p99 : 0
  }
}
