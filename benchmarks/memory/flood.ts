/**
 * A flood of distinct keys on one rule of the memory store, at its default bound (64 MiB), in a
 * process of its own started with --expose-gc:
 *
 *   node --expose-gc --conditions=@tollgate/source --import tsx memory/flood.ts <rule> [keys]
 *
 * Every key sends one request (a sliding log's every seventh key a burst of 100 units), a key a
 * microsecond of the rule's clock, as spoofed or rotating client addresses would. After every
 * tenth of the flood it records the store's own byte count and the memory the process retains
 * (heap plus array buffers after full collections, less what it retained before the flood).
 */
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  memoryStore,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import { ipKey } from './keys.js'

export const FLOOD_RULES: Readonly<Record<string, () => Algorithm>> = {
  token_bucket: () => tokenBucket({ rate: 100, periodMs: 60_000, burst: 100 }),
  gcra: () => gcra({ rate: 100, periodMs: 60_000, burst: 100 }),
  leaky_bucket: () => leakyBucket({ rate: 100, periodMs: 60_000, burst: 100 }),
  fixed_window: () => fixedWindow({ limit: 100, windowMs: 60_000 }),
  sliding_window: () => slidingWindow({ limit: 100, windowMs: 60_000 }),
  'sliding_log, limit 100': () => slidingLog({ limit: 100, windowMs: 60_000 }),
  'sliding_log, limit 100,000': () => slidingLog({ limit: 100_000, windowMs: 60_000 }),
}

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')

function retained(): number {
  for (let i = 0; i < 4; i++) gc!()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

const isMain = process.argv[1]?.endsWith('flood.ts') === true
if (isMain) {
  const [name = '', keysArg] = process.argv.slice(2)
  const make = FLOOD_RULES[name]
  if (make === undefined) throw new Error(`unknown rule ${JSON.stringify(name)}`)
  const keys = Number(keysArg ?? 5_000_000)
  const algorithm = make()
  const burst = algorithm.name === 'sliding_log' ? 100 : 1
  const store = memoryStore()
  const start = 1_700_000_000_000
  store.consumeOne('flood', algorithm, 'warm-up', 1, start)
  const before = retained()
  const samples: { keys: number; storeBytes: number; retainedBytes: number }[] = []
  const started = performance.now()
  let allowed = 0
  for (let i = 0; i < keys; i++) {
    const cost = i % 7 === 0 ? burst : 1
    // A key a microsecond: the flood spans keys / 1000 ms of the rule's clock.
    if (
      store.consumeOne('flood', algorithm, ipKey(i), cost, start + Math.floor(i / 1000)).allowed
    ) {
      allowed++
    }
    if ((i + 1) % (keys / 10) === 0) {
      samples.push({ keys: i + 1, storeBytes: store.bytes, retainedBytes: retained() - before })
    }
  }
  const seconds = (performance.now() - started) / 1000
  if (allowed !== keys)
    throw new Error(`${name}: only ${allowed} of ${keys} first requests allowed`)
  process.stdout.write(
    `${JSON.stringify({ name, keys, seconds, size: store.size, evictions: store.evictions, samples })}\n`,
  )
  process.exit(0)
}
