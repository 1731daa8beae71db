/** Turns the flood measurements into the "## Memory store under a flood of keys" section. */
import { cpus, loadavg } from 'node:os'

export type FloodResult = {
  readonly name: string
  readonly keys: number
  readonly seconds: number
  readonly size: number
  readonly evictions: number
  readonly samples: readonly { keys: number; storeBytes: number; retainedBytes: number }[]
}

const MIB = 1024 * 1024
const BOUND = 64 * MIB

export function floodSection(command: string, results: readonly FloodResult[]): string {
  const mib = (bytes: number) => (bytes / MIB).toFixed(1)
  const row = (result: FloodResult) => {
    const store = result.samples.map((s) => s.storeBytes)
    const held = result.samples.map((s) => s.retainedBytes)
    const half = result.samples.slice(result.samples.length / 2)
    const spread =
      Math.max(...half.map((s) => s.retainedBytes)) - Math.min(...half.map((s) => s.retainedBytes))
    return `| ${result.name} | ${mib(Math.max(...store))} | ${mib(Math.max(...held))} | ${mib(held.at(-1)!)} | ${mib(spread)} | ${(result.size / 1e3).toFixed(0)} k | ${(result.keys / result.seconds / 1e6).toFixed(2)} |`
  }
  const met = results.every((r) =>
    r.samples.every((s) => s.storeBytes <= BOUND && s.retainedBytes <= BOUND * 1.05),
  )
  return `## Memory store under a flood of keys

${(results[0]?.keys ?? 0) / 1e6} M distinct keys, one request each (a sliding log's every seventh key a burst of 100
units), on one rule of a \`memoryStore()\` at its default bound of 64 MiB, a key a microsecond of
the rule's clock so that no state is fresh again during the flood (every key dropped is an
eviction). Memory is sampled after every tenth of the flood: the store's own count
(\`store.bytes\`) and what the process retains (heap plus array buffers after full collections,
less what it held before the flood).

| rule | store bytes, highest (MiB) | retained, highest (MiB) | retained at the end (MiB) | retained, spread over the second half (MiB) | keys held at the end | keys per second (M) |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${results.map(row).join('\n')}

Target: memory flat at the bound for every rule, sliding logs of limit 100,000 included:
${met ? 'met' : '**not met**'} (store bytes never above 64 MiB, retained within 5 % of it).

- Command: \`${command}\` (from the repository root).
- Machine: Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, shared with other work
  (load average ${loadavg()[0]!.toFixed(1)} at the end). Keys per second include the sampling's full
  collections; the section above measures speed.
- A sliding log costs what it holds: a key with one entry takes a slot and a block with room
  for two entries, whatever the rule's limit; the limit only caps how far a log may grow.
`
}
