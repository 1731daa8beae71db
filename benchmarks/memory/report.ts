/** Turns the memory benchmark's measurements into the "## Memory store" section of the docs. */
import { cpus } from 'node:os'
import { type Contender, contenders } from './contenders.js'
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
  readonly load: readonly [before: number, after: number]
}

const NAIVE = contenders[0]!.name
const MINE = ['tollgate memoryStore, token bucket', 'tollgate memoryStore, GCRA']

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
  const wallRow = ({ name, versus = NAIVE }: Contender) =>
    `| ${name} | ${SCENARIOS.map((scenario) => fixed(ratio(name, versus, scenario, 'perWallSecond'))).join(' | ')} |`

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

The same ratios from wall-clock time, which the other processes on this shared machine disturb
more:

| contender | hot key | ${millions} keys | built per request |
| --- | ---: | ---: | ---: |
${contenders.map(wallRow).join('\n')}

- Command: \`${results.command}\` (from the repository root).
- Machine: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, a VM
  shared with other work (load average ${fixed(results.load[0], 1)} before, ${fixed(results.load[1], 1)} after).
- Every contender is set to 100 requests per 60 s and reads the clock once per decision
  (\`Date.now()\`, as the peers do inside, and as the spec's naive limiter does). Tollgate and
  the naive bucket answer synchronously; the peers are awaited, as their middleware does
  (@fastify/rate-limit's callback store through the promise its plugin wraps it in).
- Hot key: one key, over and over (mostly denied after the first 100). ${millions} keys:
  distinct IPv4-shaped keys in a fixed random order, all inserted by a warm-up pass first;
  either the key strings are built once up front (so \`Map\` reuses each string's cached hash),
  or each is built for its request, as a server builds it from the client's address.
- Naive Map bucket: the spec's in-process \`TokenBucketLimiter\` in integer units, one object per
  key in a \`Map\`, written only for new keys, answering \`{ allowed, retryAfterMs }\`.
- On the hot key, a token-bucket decision computes remaining units, reset and retry times
  exactly (three exact integer divisions) and returns five fields; the naive bucket computes one
  retry time and returns two. GCRA's decision is lighter.
- The "time passed in" rows take the time from a counter instead (one ms per 1,024 decisions);
  their ratios are to the naive bucket given the same counter. Compare the two naive rows for
  what reading the clock costs: without it, the JIT reduces the naive bucket on one key to a few
  instructions, and on keys built up front consecutive \`Map\` lookups can overlap their cache
  misses, which a store that must first hash the key's characters does less. A server reads the
  clock and builds the key for every request.
- Retained memory: keys built per request and dropped, so a store that keeps the strings pays
  for them. Tollgate's store is created with \`maxBytes: 2 ** 36\` (64 GiB), so the bound never trims it.
`
}
