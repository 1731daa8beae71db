/**
 * Where one step's allocations come from: V8's sampling heap profiler over many calls, every
 * sampled allocation kept (also those the next scavenge frees), summed by function and line.
 *
 *   node --conditions=@tollgate/source --import tsx adapters/allocation-sites.ts koa
 *
 * Add --no-turbo-inlining to charge each allocation to the function that makes it rather than
 * to the one it was inlined into (the optimiser then removes a little less).
 */
import { Session } from 'node:inspector/promises'
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
const session = new Session()
session.connect()
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 64,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
})
await run(COUNT)
const { profile } = await session.post('HeapProfiler.stopSampling')
type Node = {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: Node[]
}
// selfSize is already scaled up from the samples to an estimate of every allocation.
const bySite = new Map<string, number>()
function walk(node: Node) {
  const { functionName, url, lineNumber } = node.callFrame
  const site = `${functionName || '(anonymous)'} ${url.replace(/^.*?\/(packages|benchmarks)\//, '$1/')}:${lineNumber + 1}`
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
  for (const child of node.children) walk(child)
}
walk(profile.head as Node)
const total = [...bySite.values()].reduce((a, b) => a + b, 0)
console.log(`${name}: about ${(total / COUNT).toFixed(0)} B per call`)
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 16)) {
  if (bytes / COUNT < 1) break
  console.log(`${(bytes / COUNT).toFixed(1).padStart(8)}  ${site}`)
}
if (sink === Symbol.for('never')) console.log(sink)
