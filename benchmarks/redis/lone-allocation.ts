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
import { fileURLToPath } from 'node:url'
import { allocationSites } from '../allocation-sites.js'
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

async function measure(subject: Subject, url: string): Promise<void> {
  const redis = await connect(url, false)
  const decide = await subject.setup(redis)
  await runLoad(decide, identities(100_000, 5_000, 7), 1)
  const ids = identities(100_000, REQUESTS, 17)
  const { perCall, sites } = await allocationSites(
    async () => {
      await runLoad(decide, ids, 1)
    },
    REQUESTS,
    32,
  )
  redis.disconnect()
  console.log(`${subject.name}: about ${Math.round(perCall)} B per decision`)
  for (const [site, bytes] of sites.slice(0, SITES)) {
    console.log(`${String(Math.round(bytes)).padStart(8)}  ${site}`)
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
