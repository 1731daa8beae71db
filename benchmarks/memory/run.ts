/**
 * The memory-store benchmark: every contender side by side, each measurement in a fresh process
 * (so no contender's heap slows another's garbage collector), rounds interleaved in a rotating
 * order, medians reported as ratios to the naive Map bucket.
 *
 *   pnpm --filter @tollgate/benchmarks bench:memory [--rounds=5] [--keys=1000000]
 *     [--memory-keys=2040000] [--peer-memory-keys=2040000] [--write]
 *
 * `--write` replaces the "## Memory store" section of docs/benchmarks.md with the results.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { contenders } from './contenders.js'
import { median } from './keys.js'

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
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const NAIVE = contenders[0]!.name

type Throughput = { perCpuSecond: number; perWallSecond: number }
type Retained = { bytesPerKey: number; keys: number }

function worker<T>(script: string, workerArgs: string[]): T {
  // Same flags as this process (tsx loader, conditions, --expose-gc), and room for big peers.
  const flags = [...process.execArgv, '--max-old-space-size=8192']
  const output = execFileSync(process.execPath, [...flags, here(script), ...workerArgs], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  return JSON.parse(output.trim().split('\n').at(-1)!) as T
}

const log = (line: string) => process.stderr.write(`${line}\n`)
const loadBefore = loadavg()[0]!
const samples = new Map<string, { hot: Throughput[]; rotation: Throughput[] }>(
  contenders.map((contender) => [contender.name, { hot: [], rotation: [] }]),
)
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < contenders.length; i++) {
    const { name } = contenders[(round + i) % contenders.length]!
    for (const scenario of ['hot', 'rotation'] as const) {
      const result = worker<Throughput>('throughput.ts', [name, scenario, String(rotationKeys)])
      samples.get(name)![scenario].push(result)
      log(`round ${round + 1}/${rounds} ${scenario} ${name}: ${mps(result.perCpuSecond)} M/s`)
    }
  }
}
const retained = new Map<string, Retained>()
for (const { name, retained: measured } of contenders) {
  if (measured === false) continue
  const keys = name.startsWith('tollgate') || name === NAIVE ? memoryKeys : peerMemoryKeys
  const result = worker<Retained>('retained.ts', [name, String(keys)])
  retained.set(name, result)
  log(`retained ${name}: ${result.bytesPerKey.toFixed(1)} B/key at ${keys} keys`)
}
const loadAfter = loadavg()[0]!

function mps(perSecond: number): string {
  return (perSecond / 1e6).toFixed(2)
}

function medianOf(name: string, scenario: 'hot' | 'rotation', field: keyof Throughput): number {
  return median(samples.get(name)![scenario].map((sample) => sample[field]))
}

function row(name: string): string {
  const cells = (['hot', 'rotation'] as const).flatMap((scenario) => {
    const mine = medianOf(name, scenario, 'perCpuSecond')
    const naive = medianOf(NAIVE, scenario, 'perCpuSecond')
    const wall =
      medianOf(name, scenario, 'perWallSecond') / medianOf(NAIVE, scenario, 'perWallSecond')
    return [mps(mine), `${(mine / naive).toFixed(2)}`, `${wall.toFixed(2)}`]
  })
  const memory = retained.get(name)
  const keys =
    memory === undefined || memory.keys === memoryKeys
      ? ''
      : ` (at ${(memory.keys / 1e3).toFixed(0)} k keys)`
  const bytes = memory === undefined ? '—' : memory.bytesPerKey.toFixed(1)
  return `| ${name} | ${cells.join(' | ')} | ${bytes}${keys} |`
}

const command =
  `pnpm --filter @tollgate/benchmarks bench:memory ${process.argv.slice(2).join(' ')}`.trim()
const section = `## Memory store

Decisions per second of CPU time (median of ${rounds} rounds; each round runs every contender in
a fresh process, 5 repetitions, median), and retained memory per live key (heap plus array
buffers after full collections). Ratios are to the naive Map bucket; "wall" repeats the ratio
from wall-clock time, which the other processes on this shared machine disturb more.

| contender | hot key M/s | × naive | wall × | ${(rotationKeys / 1e6).toString()} M keys M/s | × naive | wall × | B/key at ${(memoryKeys / 1e6).toFixed(2)} M keys |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${contenders.map((contender) => row(contender.name)).join('\n')}

- Command: \`${command}\` (from the repository root).
- Machine: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, shared
  with other work (load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after).
- Every contender is set to 100 requests per 60 s and reads the clock once per decision
  (\`Date.now()\`, as the peers do inside). Tollgate and the naive bucket answer synchronously;
  the peers are awaited, as their middleware does (@fastify/rate-limit's callback store through
  the promise its plugin wraps it in).
- Hot key: one key, over and over (mostly denied after the first 100). Rotation: distinct
  IPv4-shaped keys in a fixed random order, all inserted by a warm-up pass first.
- Naive Map bucket: the spec's in-process \`TokenBucketLimiter\` in integer units, one object per
  key in a \`Map\`, written only for new keys, answering \`{ allowed, retryAfterMs }\`.
- Retained memory: keys built per request and dropped, so a store that keeps the strings pays
  for them. Tollgate's store is created with \`maxKeys: 16_000_000\`, so the bound never trims it.
`

process.stdout.write(`${section}\n`)
if (args.has('write')) {
  const doc = here('../../docs/benchmarks.md')
  const current = existsSync(doc) ? readFileSync(doc, 'utf8') : '# Benchmarks\n'
  const start = current.indexOf('\n## Memory store\n')
  const next = start < 0 ? -1 : current.indexOf('\n## ', start + 1)
  const updated =
    start < 0
      ? `${current.trimEnd()}\n\n${section}`
      : `${current.slice(0, start + 1)}${section}${next < 0 ? '' : current.slice(next)}`
  writeFileSync(doc, updated)
  log(`wrote ${doc}`)
}
