/**
 * The adapter benchmark's tables (run.ts runs them, then the facade): CPU per request that each rate limiter adds to a bare app, in-process
 * with one request in flight (light-my-request for Express and Koa, `app.request()` for Hono),
 * every variant interleaved in the same run; with `--sockets`, a sanity check over real sockets
 * with autocannon; with `--write`, the "## Adapters" section of docs/benchmarks.md.
 *
 *   pnpm --filter @tollgate/benchmarks bench:adapters -- --sockets --write
 *
 * Options: --runs=5 --rounds=61 --requests=500 --seconds=3 --framework=express|koa|hono
 * --clients=1,100000 (one table per count: one client, then many rotating addresses)
 */
import { availableParallelism, loadavg } from 'node:os'
import type { VariantName } from './config.js'
import { writeSection } from './doc.js'
import { FRAMEWORKS, measureFrameworkInChild, VARIANTS } from './in-process.js'
import { median } from './measure.js'
import { measureSockets, type SocketResult } from './sockets.js'

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=')
    return [name!, value ?? 'true'] as const
  }),
)
const runs = Number(args.get('runs') ?? 5)
const rounds = Number(args.get('rounds') ?? 61)
const perRound = Number(args.get('requests') ?? 500)
const only = args.get('framework')?.toLowerCase()
const clientCounts = (args.get('clients') ?? '1,100000').split(',').map(Number)
const frameworks = FRAMEWORKS.filter(
  (f) => only === undefined || f.name.toLowerCase().startsWith(only),
)

const fmt = (value: number) => value.toFixed(1)
/** A difference, signed: +3.1 or −0.4. */
const signed = (value: number) => (value < 0 ? `−${fmt(-value)}` : `+${fmt(value)}`)
const shown = VARIANTS.filter((v) => v !== 'bare')

/** Every framework, `runs` times, its requests from `clients` addresses: the tables. */
async function tablesFor(clients: number): Promise<string[]> {
  // Each run measures every framework once; figures are medians over the runs.
  const bare = new Map<string, number[]>()
  const added = new Map<string, Map<VariantName, number[]>>()
  for (let run = 0; run < runs; run++) {
    for (const framework of frameworks) {
      const result = await measureFrameworkInChild(framework, { rounds, perRound, clients })
      if (!bare.has(framework.name)) bare.set(framework.name, [])
      bare.get(framework.name)!.push(result.bare)
      if (!added.has(framework.name)) added.set(framework.name, new Map())
      for (const [variant, value] of result.added) {
        const cells = added.get(framework.name)!
        if (!cells.has(variant)) cells.set(variant, [])
        cells.get(variant)!.push(value)
      }
    }
  }
  const from =
    clients === 1
      ? 'one client address'
      : `${clients.toLocaleString('en-US')} client addresses in turn`
  const lines = [
    `**Requests from ${from}.** Node ${process.version}; ${runs} runs of ${rounds} interleaved rounds × ${perRound} requests per variant.`,
    '',
    `| framework | peer | bare app (CPU µs/req) | ${shown.join(' | ')} |`,
    `|---|---|---:|${shown.map(() => '---:|').join('')}`,
  ]
  for (const framework of frameworks) {
    const cells = shown.map((variant) => signed(median(added.get(framework.name)!.get(variant)!)))
    lines.push(
      `| ${framework.name} | ${framework.peer} | ${fmt(median(bare.get(framework.name)!))} | ${cells.join(' | ')} |`,
    )
  }
  const ratioColumns: readonly VariantName[] = [
    'tollgate',
    'tollgate, partition key',
    'tollgate, same headers',
  ]
  const header = `| framework | ${ratioColumns.join(' | ')} |`
  const rule = `|---|${ratioColumns.map(() => '---:|').join('')}`
  lines.push('', 'Tollgate ÷ peer (CPU added per request; below 1 is cheaper):', '', header, rule)
  for (const framework of frameworks) {
    const cell = (variant: VariantName) =>
      median(added.get(framework.name)!.get(variant)!) /
      median(added.get(framework.name)!.get('peer')!)
    lines.push(`| ${framework.name} | ${ratioColumns.map((v) => cell(v).toFixed(2)).join(' | ')} |`)
  }
  // The spread between runs: each run's own ratio, lowest to highest.
  lines.push('', 'Spread between runs (each run’s Tollgate ÷ peer, lowest–highest):', '')
  lines.push(header, rule)
  for (const framework of frameworks) {
    const cells = added.get(framework.name)!
    const range = (variant: VariantName) => {
      const ratios = cells.get(variant)!.map((value, run) => value / cells.get('peer')![run]!)
      return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`
    }
    lines.push(`| ${framework.name} | ${ratioColumns.map(range).join(' | ')} |`)
  }
  return lines
}

const loadBefore = loadavg()[0]!
const lines: string[] = []
for (const clients of clientCounts) {
  if (lines.length > 0) lines.push('')
  lines.push(...(await tablesFor(clients)))
}

if (args.has('sockets')) {
  lines.push(
    '',
    'Over real sockets (autocannon, 1 connection, one client address; server CPU per request, medians of 3 rounds):',
    '',
  )
  lines.push(
    '| framework | variant | req/s | server CPU µs/req | added over bare |',
    '|---|---|---:|---:|---:|',
  )
  for (const framework of frameworks) {
    const results: SocketResult[] = await measureSockets(
      framework.name,
      Number(args.get('seconds') ?? 3),
    )
    const base = results.find((r) => r.variant === 'bare')!
    for (const r of results) {
      const name = r.variant === 'peer' ? framework.peer : r.variant
      const extra = r.variant === 'bare' ? '' : signed(r.cpuPerRequest - base.cpuPerRequest)
      lines.push(
        `| ${framework.name} | ${name} | ${Math.round(r.requestsPerSecond)} | ${fmt(r.cpuPerRequest)} | ${extra} |`,
      )
    }
  }
}

lines.push(
  '',
  `Run on ${new Date().toISOString().slice(0, 10)} on the shared ${availableParallelism()}-core machine, load average ${loadBefore.toFixed(1)} at the start and ${loadavg()[0]!.toFixed(1)} at the end.`,
)
const table = lines.join('\n')
console.log(table)
if (args.has('write')) await writeSection(table)
