/**
 * Memory per queued request: the heap that `count` requests waiting in one leaky queue hold
 * (the verdict, the wait's promises, the scheduler's heap entry, the abort listener), measured
 * with the GC forced before and after. Timers are a test's, so nothing is released while it measures.
 * `pnpm --filter @tollgate/benchmarks bench:queue -- --memory` (run.ts starts a process per count)
 */
import { createLimiter, type Timers, type Verdict } from '@tollgate/core'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

// Holding the callback, as the runtime's timers do: the armed timer keeps the scheduler alive.
const armed = new Set<() => void>()
const heldTimers: Timers = {
  setTimeout: (callback) => armed.add(callback) && callback,
  clearTimeout: (handle) => armed.delete(handle as () => void),
}
const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }

async function measure(count: number, withSignal: boolean): Promise<number> {
  const limiter = createLimiter({
    rules: [
      { id: 'q', match: { identity: 'ip' }, algorithm: 'leaky_queue', rate: 1, burst: count },
    ],
    clock: { now: () => 1_000_000 },
    timers: heldTimers,
  })
  await limiter.acquire(facts) // served at once
  // The next one waits, which makes the scheduler: not counted.
  const warm = limiter.acquire(facts)
  await new Promise((resolve) => setImmediate(resolve))
  gc!()
  gc!()
  const before = process.memoryUsage().heapUsed
  const waiting: Promise<unknown>[] = []
  const signals: AbortController[] = []
  for (let i = 0; i < count - 2; i++) {
    const controller = withSignal ? new AbortController() : undefined
    if (controller !== undefined) signals.push(controller)
    // As the adapter kit does: the memory store decides synchronously, then the request waits.
    const verdict = limiter.decide(facts) as Verdict
    waiting.push(limiter.hold(verdict, { signal: controller?.signal }))
  }
  await new Promise((resolve) => setImmediate(resolve))
  gc!()
  gc!()
  const after = process.memoryUsage().heapUsed
  // Kept alive until measured.
  if (waiting.length !== count - 2 || signals.length > count || warm === undefined)
    throw new Error('unreachable')
  if ((limiter.decide(facts) as Verdict).waitMs === undefined) throw new Error('nothing waited')
  return (after - before) / (count - 2)
}

// One measurement per process, so that no earlier run's garbage is counted: `<count> [signal]`.
const count = Number(process.argv[2] ?? 10_000)
const withSignal = process.argv[3] === 'signal'
const bytes = await measure(count, withSignal)
console.log(
  `${count.toLocaleString('en')} waiting${withSignal ? ', an AbortSignal each (included)' : ''}: ${bytes.toFixed(0)} B per request`,
)
