/**
 * The memory-store benchmark: every contender side by side, each measurement in a fresh process
 * (so no contender's heap slows another's garbage collector), rounds interleaved in a rotating
 * order, medians reported as ratios to the naive Map bucket.
 *
 *   pnpm --filter @tollgate/benchmarks bench:memory [--rounds=5] [--keys=1000000]
 *     [--memory-keys=2040000] [--peer-memory-keys=2040000] [--flood-keys=5000000]
 *     [--flood-only] [--cycle-only] [--write]
 *
 * With it, bytes per key over a table's growth cycle around `--memory-keys` keys, for each kind
 * of rule (cycle.ts: the store's own count, no timing). Then a flood of distinct keys on each
 * kind of rule at the default bound (flood.ts). `--flood-only` runs only the flood;
 * `--cycle-only` only prints the growth-cycle table. `--write` replaces the "## Memory store" and "## Memory
 * store under a flood of keys" sections of docs/benchmarks.md with the results.
 */
import { execFileSync } from 'node:child_process'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { replaceDocSection } from '../doc-section.js'
import { contenders } from './contenders.js'
import type { Cycle } from './cycle.js'
import { FLOOD_RULES } from './flood.js'
import { type FloodResult, floodSection } from './flood-report.js'
import {
  cycleTable,
  memorySection,
  type Retained,
  SCENARIOS,
  type Scenario,
  type Throughput,
} from './report.js'

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=')
    return [name!, value ?? 'true'] as const
  }),
)
const rounds = Number(args.get('rounds') ?? 5)
const rotationKeys = Number(args.get('keys') ?? 1_000_000)
const memoryKeys = Number(args.get('memory-keys') ?? 2_040_000)
const peerMemoryKeys = Number(args.get('peer-memory-keys') ?? memoryKeys)
const floodKeys = Number(args.get('flood-keys') ?? 5_000_000)
const floodOnly = args.has('flood-only')
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const log = (line: string) => process.stderr.write(`${line}\n`)

/** Runs a worker script with this process's flags (tsx, conditions, --expose-gc). */
function worker<T>(script: string, workerArgs: string[]): T {
  const flags = [...process.execArgv, '--max-old-space-size=8192']
  const output = execFileSync(process.execPath, [...flags, here(script), ...workerArgs], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  return JSON.parse(output.trim().split('\n').at(-1)!) as T
}

const command =
  `pnpm --filter @tollgate/benchmarks bench:memory ${process.argv.slice(2).join(' ')}`.trim()

if (args.has('cycle-only')) {
  process.stdout.write(
    `${cycleTable(worker<Cycle[]>('cycle.ts', [String(memoryKeys)]), memoryKeys)}\n`,
  )
  process.exit(0)
}
if (!floodOnly) await throughputAndRetained()

const floods: FloodResult[] = []
for (const name of Object.keys(FLOOD_RULES)) {
  const result = worker<FloodResult>('flood.ts', [name, String(floodKeys)])
  floods.push(result)
  const highest = Math.max(...result.samples.map((s) => s.retainedBytes)) / 2 ** 20
  log(`flood ${name}: ${highest.toFixed(1)} MiB retained at most, ${result.size} keys held`)
}
const flood = floodSection(command, floods)
process.stdout.write(`${flood}\n`)
if (args.has('write')) {
  await replaceDocSection('Memory store under a flood of keys', flood)
  log('wrote docs/benchmarks.md')
}

async function throughputAndRetained(): Promise<void> {
  const loadBefore = loadavg()[0]!
  const samples = new Map<string, Record<Scenario, Throughput[]>>(
    contenders.map(({ name }) => [name, { hot: [], rotation: [], built: [] }]),
  )
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const { name } = contenders[(round + i) % contenders.length]!
      for (const scenario of SCENARIOS) {
        const result = worker<Throughput>('throughput.ts', [name, scenario, String(rotationKeys)])
        samples.get(name)![scenario].push(result)
        log(`round ${round + 1}/${rounds} ${scenario} ${name}: ${result.perCpuSecond / 1e6} M/s`)
      }
    }
  }
  const retained = new Map<string, Retained>()
  for (const { name, async, retained: measured } of contenders) {
    if (measured === false) continue
    const keys = async ? peerMemoryKeys : memoryKeys
    const result = worker<Retained>('retained.ts', [name, String(keys)])
    retained.set(name, result)
    log(`retained ${name}: ${result.bytesPerKey} B/key at ${keys} keys`)
  }

  const cycles = worker<Cycle[]>('cycle.ts', [String(memoryKeys)])
  const section = memorySection({
    command,
    cycles,
    rounds,
    rotationKeys,
    memoryKeys,
    samples,
    retained,
    load: [loadBefore, loadavg()[0]!],
  })
  process.stdout.write(`${section}\n`)
  if (args.has('write')) {
    await replaceDocSection('Memory store', section)
    log('wrote docs/benchmarks.md')
  }
}
