/**
 * Where one step's allocations come from: V8's sampling heap profiler over many calls, every
 * sampled allocation kept (also those the next scavenge frees), summed by function and line.
 *
 *   node --conditions=@tollgate/source --import tsx adapters/allocation-sites.ts koa
 *
 * Add --no-turbo-inlining to charge each allocation to the function that makes it rather than
 * to the one it was inlined into (the optimiser then removes a little less).
 */
import { allocationSites } from '../allocation-sites.js'
import { steps } from './allocation-steps.js'

const name = process.argv[2] ?? 'core'
const step = steps[name as keyof typeof steps]
if (step === undefined) throw new Error(`no step ${name}: ${Object.keys(steps).join(', ')}`)
let sink: unknown
const COUNT = 200_000
async function run(count: number) {
  for (let i = 0; i < count; i++) {
    const result = step()
    sink = result instanceof Promise ? await result : result
  }
}
await run(COUNT) // warm-up
const { perCall, sites } = await allocationSites(() => run(COUNT), COUNT)
console.log(`${name}: about ${perCall.toFixed(0)} B per call`)
for (const [site, bytes] of sites.slice(0, 16)) {
  if (bytes < 1) break
  console.log(`${bytes.toFixed(1).padStart(8)}  ${site}`)
}
if (sink === Symbol.for('never')) console.log(sink)
