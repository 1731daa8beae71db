/**
 * Decisions per second against one Durable Object in local workerd (miniflare): a Worker makes
 * them through `durableObjectStore`, one subrequest each, sequentially and with several in
 * flight; timed from Node around each batch (median of five). Writes the "Durable Object store"
 * section of docs/benchmarks.md, with the bundle size of a one-rule Hono Worker on the store.
 *   pnpm --filter @tollgate/benchmarks bench:durable-object
 */
import { availableParallelism, cpus } from 'node:os'
import { bundleWorker, COMPATIBILITY_DATE } from '@tollgate/test-utils'
import { Miniflare } from 'miniflare'
import { type BundleSize, measure } from '../../test/bundle-size/measure.js'
import { replaceDocSection } from '../doc-section.js'

const BATCH = 2000
const RUNS = 5
const IN_FLIGHT = [1, 8, 32]

const mf = new Miniflare({
  modules: true,
  script: await bundleWorker(new URL('./worker.ts', import.meta.url)),
  compatibilityDate: COMPATIBILITY_DATE,
  durableObjects: { LIMITER: { className: 'TollgateLimiter', useSQLite: true } },
})

async function batch(n: number, c: number): Promise<number> {
  const started = performance.now()
  const res = await mf.dispatchFetch(`http://bench.test/decide?n=${n}&c=${c}`)
  const { admitted } = (await res.json()) as { admitted: number }
  if (admitted !== n) throw new Error(`${admitted} of ${n} admitted`)
  return performance.now() - started
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const rows: string[] = []
try {
  await batch(500, 8) // warm-up: the object started, its code compiled
  for (const c of IN_FLIGHT) {
    const times: number[] = []
    for (let run = 0; run < RUNS; run++) times.push(await batch(BATCH, c))
    const ms = median(times)
    const perSecond = Math.round((BATCH / ms) * 1000)
    const latency = (ms / BATCH) * c
    rows.push(`| ${c} | ${perSecond.toLocaleString('en')} | ${latency.toFixed(2)} ms |`)
    console.log(`${c} in flight: ${perSecond} decisions/s, ${latency.toFixed(2)} ms each`)
  }
} finally {
  await mf.dispose()
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const bare = await measure('hono-bare')
const oneRule = await measure('hono-one-rule')
const onObject = await measure('hono-durable-object')
const bundleRow = (name: string, size: BundleSize) =>
  `| ${name} | ${kb(size.minified)} | ${kb(size.gzip)} | +${kb(size.gzip - bare.gzip)} |`

const date = new Date().toISOString().slice(0, 10)
await replaceDocSection(
  'Durable Object store',
  `## Durable Object store

\`@tollgate/cloudflare\`: decisions per second against **one** object (one client's key) in
local workerd through miniflare, made by a Worker through \`durableObjectStore\`, one
subrequest each, ${BATCH} per batch, median of ${RUNS} batches. Every decision admits and writes
the object's SQLite storage. Run on ${date} on the shared ${availableParallelism()}-core machine
(${cpus()[0]?.model.trim()}); figures vary with its load by a factor of two between runs.
Locally the Worker and the object share one process, so these are the object's own costs (the
JSON request, the decision, the SQLite write its answer waits for) and a local subrequest; on
Cloudflare each subrequest also travels to the location the object lives in. One object answers
one request at a time: a single client key is bounded by its object (Cloudflare's limits page
gives a soft limit of 1,000 requests per second per object); leasing part of a hot key's
allowance to each isolate (\`leasedStore\`) lets isolates admit its requests without a subrequest.

\`\`\`sh
pnpm build && pnpm --filter @tollgate/benchmarks bench:durable-object
\`\`\`

| decisions in flight | decisions/s, one object | time per decision |
| ------------------- | ----------------------- | ----------------- |
${rows.join('\n')}

Bundle size of a one-rule Hono Worker (as wrangler bundles it, minified, gzip level 9; see
[Bundle size](#bundle-size)): the store adds its client, the object class the Worker exports and
the algorithm factories the object rebuilds rules with.

| app (Hono Worker, one rule) | minified | gzip | added to bare Hono (gzip) |
| --------------------------- | -------- | ---- | ------------------------- |
${bundleRow('`@tollgate/hono`, memory store', oneRule)}
${bundleRow('`@tollgate/hono` + `durableObjectStore` and `TollgateLimiter`', onObject)}
`,
)
