/**
 * What a lone request allocates in the gateway's process, and where: one request in flight
 * against a Redis of the benchmark's own, V8's sampling heap profiler over the measured requests
 * (every sampled allocation kept, also those the next scavenge frees), summed by function. The
 * same for Tollgate GCRA through the store, its script called bare with ioredis's `evalsha`, and
 * rate-limit-redis, each in a process of its own so that none shapes another's optimised code.
 *
 *   pnpm --filter @tollgate/benchmarks bench:redis-allocation            # every subject
 *   pnpm --filter @tollgate/benchmarks bench:redis-allocation -- store   # one of store, bare, peer
 *
 * REQUESTS (20,000) and SITES (12) change the run; NODE_OPTIONS=--no-turbo-inlining charges each
 * allocation to the function that makes it rather than to the one it was inlined into.
 */
import { execFileSync } from 'node:child_process'
import { Session } from 'node:inspector/promises'
import { fileURLToPath } from 'node:url'
import { clear, connect, identities, runLoad } from './measure.js'
import { benchmarkRedis } from './own-server.js'
import { PEERS, type Subject, TOLLGATE, TOLLGATE_GCRA_SCRIPT } from './subjects.js'

const SUBJECTS: Record<string, Subject> = {
  store: TOLLGATE[0]!,
  bare: TOLLGATE_GCRA_SCRIPT,
  peer: PEERS[0]!,
}
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const REQUESTS = env('REQUESTS', 20_000)
const SITES = env('SITES', 12)
const [which] = process.argv.slice(2).filter((arg) => arg !== '--')

type ProfileNode = {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

async function measure(subject: Subject, url: string): Promise<void> {
  const redis = await connect(url, false)
  const decide = await subject.setup(redis)
  await runLoad(decide, identities(100_000, 5_000, 7), 1)
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 32,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  await runLoad(decide, identities(100_000, REQUESTS, 17), 1)
  const { profile } = await session.post('HeapProfiler.stopSampling')
  session.disconnect()
  redis.disconnect()
  // selfSize is already scaled up from the samples to an estimate of every allocation.
  const bySite = new Map<string, number>()
  const walk = (node: ProfileNode) => {
    const { functionName, url: file, lineNumber } = node.callFrame
    const where = file.replace(/^.*?\/(packages|benchmarks|node_modules)\//, '$1/')
    const site = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
    for (const child of node.children) walk(child)
  }
  walk(profile.head as ProfileNode)
  const total = [...bySite.values()].reduce((a, b) => a + b, 0)
  console.log(`${subject.name}: about ${Math.round(total / REQUESTS)} B per decision`)
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, SITES)) {
    console.log(`${String(Math.round(bytes / REQUESTS)).padStart(8)}  ${site}`)
  }
}

if (which !== undefined) {
  const subject = SUBJECTS[which]
  if (subject === undefined) {
    throw new Error(`no subject ${which}: ${Object.keys(SUBJECTS).join(', ')}`)
  }
  const server = await benchmarkRedis()
  try {
    await measure(subject, server.url)
    const admin = await connect(server.url, false)
    await clear(admin, subject.prefix)
    admin.disconnect()
  } finally {
    await server.stop()
  }
} else {
  // Each subject in a process of its own.
  for (const name of Object.keys(SUBJECTS)) {
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), name], {
      stdio: 'inherit',
    })
  }
}
