// What core/node uses of Node's `perf_hooks`: core is compiled without Node's types, so that no
// other part of it can reach for a Node global unnoticed.
declare module 'node:perf_hooks' {
  export function monitorEventLoopDelay(options?: { resolution?: number }): {
    enable(): boolean
    reset(): void
    percentile(percentile: number): number
  }
}
