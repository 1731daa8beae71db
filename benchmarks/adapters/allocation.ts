/**
 * Bytes allocated and ns spent per admitted request by Tollgate's own code, with the framework
 * faked away: the core path (identities, decide, respond) and each adapter's middleware over a
 * context that records nothing. Every object allocated here is one more to initialise, and
 * memory the request touches besides the framework's.
 *
 *   pnpm --filter @tollgate/benchmarks bench:allocation
 *
 * Allocation is the growth of the heap over a block of requests with no garbage collection in
 * between (a young generation large from the start, checked, and the block retried if one
 * happened), minus that of an empty block. Results are kept in a global so that the optimiser
 * cannot drop allocations that escape in a real app.
 */
import { PerformanceObserver } from 'node:perf_hooks'
import { RESOLVED, type Step, steps } from './allocation-steps.js'

const gc = globalThis.gc
if (typeof gc !== 'function') throw new Error('run with --expose-gc')

let collections = 0
new PerformanceObserver((list) => {
  collections += list.getEntries().length
}).observe({ entryTypes: ['gc'] })

const BLOCK = 10_000
let sink: unknown

/** Garbage-collection entries reach the observer late: wait until they have. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

/** Heap bytes per call of `step` over one block, or undefined if a collection interfered. */
async function bytesPerCall(step: Step): Promise<number | undefined> {
  gc!()
  await settle()
  const seen = collections
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < BLOCK; i++) {
    const result = step()
    sink = result instanceof Promise ? await result : result
  }
  const after = process.memoryUsage().heapUsed
  await settle()
  return collections === seen ? (after - before) / BLOCK : undefined
}

async function nsPerCall(step: Step, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    const result = step()
    sink = result instanceof Promise ? await result : result
  }
  return Number(process.hrtime.bigint() - start) / count
}

async function measure(name: string, step: Step, async: boolean): Promise<void> {
  await nsPerCall(step, 200_000) // warm-up: optimised code allocates less than the interpreter
  const empty: Step = async ? () => RESOLVED : () => undefined
  const samples: number[] = []
  for (let attempt = 0; samples.length < 5; attempt++) {
    if (attempt === 20)
      throw new Error('a collection ran in every block: raise the semi-space size')
    const bytes = await bytesPerCall(step)
    const base = await bytesPerCall(empty)
    if (bytes !== undefined && base !== undefined) samples.push(bytes - base)
  }
  samples.sort((a, b) => a - b)
  const ns: number[] = []
  for (let i = 0; i < 5; i++) ns.push(await nsPerCall(step, 100_000))
  ns.sort((a, b) => a - b)
  console.log(
    `${name.padEnd(28)} ${samples[2]!.toFixed(0).padStart(6)} B/req ${ns[1]!.toFixed(0).padStart(6)} ns/req`,
  )
}

await measure('core (kit: identities+decide)', steps.core, false)
await measure('core, fields from verdict', steps['core-fields'], false)
await measure('koa middleware', steps.koa, true)
await measure('hono middleware', steps.hono, true)
await measure('express middleware', steps.express, false)
if (sink === Symbol.for('never')) console.log(sink)
