/**
 * Retained memory per key: one contender, in a process of its own, started with --expose-gc.
 *
 *   node --expose-gc --conditions=@tollgate/source --import tsx memory/retained.ts <contender> [keys]
 *
 * Measures heap plus array buffers after full collections, before and after `keys` distinct
 * IPv4-shaped keys have each made one request. The key strings are built per request and
 * dropped, as a server would, so whatever holds them is the store.
 */
import { contenderNamed } from './contenders.js'
import { ipKey } from './keys.js'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

function settledBytes(): { heap: number; buffers: number } {
  for (let i = 0; i < 4; i++) gc!()
  const usage = process.memoryUsage()
  return { heap: usage.heapUsed, buffers: usage.arrayBuffers }
}

const [name = '', keysArg] = process.argv.slice(2)
const keys = Number(keysArg ?? 2_040_000)
const contender = contenderNamed(name)
const decide = contender.create(keys)
await decide(ipKey(16_777_215)) // creates the store's first table; not counted below
const before = settledBytes()
const started = performance.now()
let allowed = 0
if (contender.async) {
  for (let i = 0; i < keys; i++) if (await decide(ipKey(i))) allowed++
} else {
  for (let i = 0; i < keys; i++) if (decide(ipKey(i))) allowed++
}
const seconds = (performance.now() - started) / 1000
const after = settledBytes()
// Keeps the store reachable until after the measurement (a dead local may be collected early).
await decide(ipKey(0))
if (allowed !== keys) throw new Error(`${name}: only ${allowed} of ${keys} first requests allowed`)
const heap = after.heap - before.heap
const buffers = after.buffers - before.buffers
process.stdout.write(
  `${JSON.stringify({
    name,
    keys,
    bytesPerKey: (heap + buffers) / keys,
    heapPerKey: heap / keys,
    buffersPerKey: buffers / keys,
    insertSeconds: seconds,
  })}\n`,
)
process.exit(0)
