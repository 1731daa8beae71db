/** Turns the memory benchmark's measurements into the "## Memory store" section of the docs. */
import { cpus } from 'node:os'
import { type Contender, contenders } from './contenders.js'
import type { Cycle } from './cycle.js'
import { median } from './keys.js'

export const SCENARIOS = ['hot', 'rotation', 'built'] as const
export type Scenario = (typeof SCENARIOS)[number]
export type Throughput = { perCpuSecond: number; perWallSecond: number }
export type Retained = { bytesPerKey: number; keys: number }

export type Results = {
  readonly command: string
  readonly rounds: number
  readonly rotationKeys: number
  readonly memoryKeys: number
  readonly samples: ReadonlyMap<string, Record<Scenario, Throughput[]>>
  readonly retained: ReadonlyMap<string, Retained>
  readonly cycles: readonly Cycle[]
  readonly load: readonly [before: number, after: number]
}

const NAIVE = contenders[0]!.name
const MINE = ['tollgate memoryStore, token bucket', 'tollgate memoryStore, GCRA']

/** The target on a token-bucket key, at every key count of a growth cycle. */
const CYCLE_TARGET = 28

/** Bytes per key over the growth cycle around `keys`, each kind of rule (cycle.ts). */
export function cycleTable(cycles: readonly Cycle[], keys: number): string {
  const rows = cycles.map(
    (c) =>
      `| ${c.rule} | ${(c.from / 1e6).toFixed(2)}–${(c.to / 1e6).toFixed(2)} M | ${c.highest.toFixed(1)} | ${c.lowest.toFixed(1)} | ${c.atKeys.toFixed(1)} |`,
  )
  const bucket = cycles.find((c) => c.rule === 'token_bucket')!
  return `| rule | keys in the cycle | B/key, highest (just after a growth) | B/key, lowest (just before the next) | B/key at ${keys / 1e6} M keys |
| --- | ---: | ---: | ---: | ---: |
${rows.join('\n')}

Target: a token-bucket key ≤ ${CYCLE_TARGET} B at every key count of the cycle: ${bucket.highest.toFixed(1)} B at most, ${bucket.highest <= CYCLE_TARGET ? 'met' : '**not met**'}.`
}

export function memorySection(results: Results): string {
  const { rounds, rotationKeys, memoryKeys, retained } = results
  const perSecond = (name: string, scenario: Scenario, field: keyof Throughput = 'perCpuSecond') =>
    median(results.samples.get(name)![scenario].map((sample) => sample[field]))
  const ratio = (name: string, versus: string, scenario: Scenario, field?: keyof Throughput) =>
    perSecond(name, scenario, field) / perSecond(versus, scenario, field)
  const fixed = (value: number, digits = 2) => value.toFixed(digits)
  const millions = `${rotationKeys / 1e6} M`

  const row = ({ name, versus = NAIVE }: Contender) => {
    const cells = SCENARIOS.flatMap((scenario) => [
      fixed(perSecond(name, scenario) / 1e6),
      fixed(ratio(name, versus, scenario)),
    ])
    const memory = retained.get(name)
    const at = memory && memory.keys !== memoryKeys ? ` (at ${memory.keys / 1e3} k keys)` : ''
    return `| ${name} | ${cells.join(' | ')} | ${memory ? fixed(memory.bytesPerKey, 1) : '—'}${at} |`
  }

  const peers = contenders.filter((contender) => contender.async).map(({ name }) => name)
  const verdict = (met: boolean) => (met ? 'met' : '**not met**')
  const targets = MINE.map((name) => {
    const hot = ratio(name, NAIVE, 'hot')
    const rotations = (['rotation', 'built'] as const).map((scenario) => {
      const mine = ratio(name, NAIVE, scenario)
      const bestPeer = Math.max(...peers.map((peer) => ratio(peer, NAIVE, scenario)))
      const keys = `${millions} keys ${scenario === 'built' ? 'built per request' : 'built up front'}`
      return `${keys} (≥ 0.9 × naive): ${fixed(mine)}, ${verdict(mine >= 0.9)}, ahead of every peer (best ${fixed(bestPeer)}): ${verdict(mine > bestPeer)}`
    })
    const bytes = retained.get(name)!.bytesPerKey
    return `- ${name}: hot key (≥ 0.8 × naive): ${fixed(hot)}, ${verdict(hot >= 0.8)}; ${rotations.join('; ')}; memory (≤ 48 B per key): ${fixed(bytes, 1)} B, ${verdict(bytes <= 48)}.`
  })

  return `## Memory store

Decisions per second of CPU time, in millions (median of ${rounds} rounds; each round runs every
contender in a fresh process, 5 repetitions each, median), and retained memory per live key
(heap plus array buffers after full collections, at ${memoryKeys / 1e6} M keys). Ratios are to the
naive Map bucket.

| contender | hot key | × naive | ${millions} keys | × naive | ${millions} keys, built per request | × naive | B/key |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${contenders.map(row).join('\n')}

Targets:

${targets.join('\n')}

Bytes per key over a table's growth cycle (the store's own count, \`store.bytes\`, as distinct
keys arrive one by one): a large table grows by a quarter at 3/4 full, so a 16-byte slot gives
21.3–26.7 B per key, a 24-byte one 32.0–40.0 and a 32-byte one 42.7–53.3.

${cycleTable(results.cycles, memoryKeys)}

- Command: \`${results.command}\` (from the repository root).
- Machine: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, a VM
  shared with other work (load average ${fixed(results.load[0], 1)} before, ${fixed(results.load[1], 1)} after).
- Every contender is set to 100 requests per 60 s and reads the clock once per decision
  (\`Date.now()\`). Tollgate and the naive bucket answer synchronously; the peers are awaited, as
  their middleware does. The naive bucket is the spec's in-process \`TokenBucketLimiter\`, one
  object per key in a \`Map\`.
- Hot key: one key, over and over (mostly denied after the first 100). ${millions} keys: distinct
  IPv4-shaped keys in a fixed random order, inserted by a warm-up pass, built once up front or
  built for each request (as a server builds them from the client's address).
- The "time passed in" rows take the time from a counter instead of the clock; their ratios are
  to the naive bucket given the same counter.
- Retained memory: keys built per request and dropped; Tollgate's store is created with
  \`maxBytes: 2 ** 36\`, so the bound never trims it.
`
}
