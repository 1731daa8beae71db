// Tollgate's Redis store against the plain-INCR floor and peer libraries, on one Redis, in one
// run: decisions/s and latency at 1 and 64 in flight, with and without ioredis auto-pipelining;
// round trips per decision; Redis memory per key. Medians of several interleaved rounds.
//
//   pnpm --filter @tollgate/benchmarks bench:redis            # print the tables
//   pnpm --filter @tollgate/benchmarks bench:redis -- --write # also update docs/benchmarks.md
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import {
  clear,
  connect,
  countWrites,
  identities,
  type Load,
  median,
  memoryPerKey,
  runLoad,
} from './measure.js'
import { INCR, PEERS, type Subject, TOLLGATE } from './subjects.js'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const { REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
const KEYS = env('BENCH_KEYS', 100_000)
const OPS = { 1: env('BENCH_OPS_1', 3_000), 64: env('BENCH_OPS_64', 40_000) } as const
const ROUNDS = env('BENCH_ROUNDS', 5)
const SUBJECTS: readonly Subject[] = [INCR, ...TOLLGATE, ...PEERS]
const CONFIGS = [
  { inFlight: 64, auto: false },
  { inFlight: 64, auto: true },
  { inFlight: 1, auto: false },
  { inFlight: 1, auto: true },
] as const
type ConfigName = `${number}-${boolean}`
const configName = (c: (typeof CONFIGS)[number]): ConfigName => `${c.inFlight}-${c.auto}`

async function measure(
  subject: Subject,
  config: (typeof CONFIGS)[number],
  round: number,
): Promise<Load> {
  const redis = await connect(REDIS_URL, config.auto)
  try {
    const decide = await subject.setup(redis)
    await runLoad(decide, identities(KEYS, 2_000, 1000 + round), config.inFlight) // warm-up, scripts loaded
    return await runLoad(decide, identities(KEYS, OPS[config.inFlight], round + 1), config.inFlight)
  } finally {
    redis.disconnect()
  }
}

async function roundTrips(subject: Subject): Promise<number> {
  const redis = await connect(REDIS_URL, false)
  try {
    const decide = await subject.setup(redis)
    await runLoad(decide, identities(KEYS, 200, 7), 1)
    const counter = countWrites(redis)
    const ids = identities(KEYS, 1_000, 8)
    await runLoad(decide, ids, 1)
    return counter.writes / ids.length
  } finally {
    redis.disconnect()
  }
}

type Summary = (name: string, config: ConfigName) => { rate: number; p50: number; p99: number }

/** The targets, checked against this run's medians. */
function targets(summary: Summary, sizes: ReadonlyMap<string, { trips: number }>): string[] {
  const ours = TOLLGATE.map((s) => s.name)
  const peers = PEERS.map((s) => s.name)
  const range = (values: number[]) =>
    `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`
  const verdict = (ok: boolean) => (ok ? 'met' : '**not met**')
  const floor = summary(INCR.name, '64-false').rate
  const plain = ours.map((name) => summary(name, '64-false').rate / floor)
  const bestPeerAuto = Math.max(...peers.map((name) => summary(name, '64-true').rate))
  const auto = ours.map((name) => summary(name, '64-true').rate / bestPeerAuto)
  const p99 = (config: ConfigName) => {
    const best = Math.min(...peers.map((name) => summary(name, config).p99))
    return ours.map((name) => summary(name, config).p99 / best)
  }
  const trips = ours.map((name) => sizes.get(name)!.trips)
  return [
    '**Targets** (from the issue; ranges are over the Tollgate rows)',
    '',
    `- 64 in flight, no auto-pipelining: ${range(plain)} × the INCR floor; target ≥ 0.90: ${verdict(Math.min(...plain) >= 0.9)}.`,
    `- 64 in flight, auto-pipelining: ${range(auto)} × the best peer; target > 1 (ahead of every peer): ${verdict(Math.min(...auto) > 1)}.`,
    `- p99 at 64 in flight, as a multiple of the best peer's p99: ${range(p99('64-false'))} without auto-pipelining, ${range(p99('64-true'))} with it; target ≤ 1: ${verdict(Math.max(...p99('64-false'), ...p99('64-true')) <= 1)}.`,
    `- Round trips per decision: ${range(trips)}, also for three rules in one request; target exactly 1: ${verdict(trips.every((t) => t === 1))}.`,
  ]
}

/**
 * Redis memory for 100 identities that each made 5 requests under a typical rule (100 per
 * minute), measured at once: the state is live, not yet expired.
 */
async function stateSize(
  subject: Subject,
): Promise<{ bytes: number; keysPerIdentity: number; keyLength: number }> {
  const redis = await connect(REDIS_URL, false)
  try {
    const decide = await subject.setup(redis, 'typical')
    const ids = Array.from({ length: 100 }, (_, i) => `ip:192.0.2.${i}`)
    for (let round = 0; round < 5; round++) await runLoad(decide, ids, 1)
    const { bytes, keys, keyLength } = await memoryPerKey(redis, subject.prefix)
    return { bytes, keysPerIdentity: keys / ids.length, keyLength }
  } finally {
    redis.disconnect()
  }
}

async function main(): Promise<void> {
  const results = new Map<string, Map<ConfigName, Load[]>>()
  for (const subject of SUBJECTS) results.set(subject.name, new Map())
  const admin = await connect(REDIS_URL, false)
  const info = (await admin.info('server')) as string
  const version = /redis_version:(\S+)/.exec(info)?.[1]
  for (const subject of SUBJECTS) await clear(admin, subject.prefix)

  for (let round = 0; round < ROUNDS; round++) {
    for (const config of CONFIGS) {
      for (const subject of SUBJECTS) {
        const load = await measure(subject, config, round)
        const byConfig = results.get(subject.name)!
        byConfig.set(configName(config), [...(byConfig.get(configName(config)) ?? []), load])
        process.stderr.write(
          `round ${round + 1}/${ROUNDS} ${config.inFlight} in flight${config.auto ? ', auto-pipelining' : ''}: ${subject.name} ${Math.round(load.rate)}/s\n`,
        )
      }
    }
  }

  const sizes = new Map<
    string,
    { bytes: number; keysPerIdentity: number; keyLength: number; trips: number }
  >()
  for (const subject of SUBJECTS) {
    await clear(admin, subject.prefix)
    const memory = await stateSize(subject)
    sizes.set(subject.name, { ...memory, trips: await roundTrips(subject) })
    await clear(admin, subject.prefix)
  }
  admin.disconnect()

  const summary: Summary = (name, config) => {
    const loads = results.get(name)!.get(config)!
    return {
      rate: median(loads.map((l) => l.rate)),
      p50: median(loads.map((l) => l.p50Ms)),
      p99: median(loads.map((l) => l.p99Ms)),
    }
  }
  const lines: string[] = []
  const table = (title: string, inFlight: 1 | 64) => {
    lines.push(`**${title}**`, '')
    lines.push(
      '| subject | decisions/s | × INCR | p50 ms | p99 ms | decisions/s, auto-pipelining | × INCR | p50 ms | p99 ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    )
    const floor = [summary(INCR.name, `${inFlight}-false`), summary(INCR.name, `${inFlight}-true`)]
    for (const subject of SUBJECTS) {
      const cells = [false, true].flatMap((auto, i) => {
        const s = summary(subject.name, `${inFlight}-${auto}`)
        return [
          Math.round(s.rate).toLocaleString('en-US'),
          (s.rate / floor[i]!.rate).toFixed(2),
          s.p50.toFixed(2),
          s.p99.toFixed(2),
        ]
      })
      lines.push(`| ${subject.name} | ${cells.join(' | ')} |`)
    }
    lines.push('')
  }
  table('64 requests in flight', 64)
  table('1 request in flight', 1)
  lines.push(
    '**Round trips and memory**',
    '',
    '| subject | round trips per decision | Redis keys per identity | key name (B) | MEMORY USAGE per key (B) | per identity (B) |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  )
  for (const subject of SUBJECTS) {
    const size = sizes.get(subject.name)!
    lines.push(
      `| ${subject.name} | ${size.trips.toFixed(2)} | ${size.keysPerIdentity.toFixed(0)} | ${Math.round(size.keyLength)} | ${Math.round(size.bytes)} | ${Math.round(size.bytes * size.keysPerIdentity)} |`,
    )
  }
  lines.push('', ...targets(summary, sizes), '')
  const meta = `Redis ${version} on ${REDIS_URL.replace(/\/\/.*@/, '//')}, ioredis 6, ${KEYS.toLocaleString('en-US')} keys, ${ROUNDS} rounds (medians), ${OPS[64].toLocaleString('en-US')} decisions per run at 64 in flight and ${OPS[1].toLocaleString('en-US')} at 1.`
  const body = [meta, '', ...lines].join('\n')
  process.stdout.write(`${body}\n`)
  if (process.argv.includes('--write')) await writeSection(body)
}

const INTRO = `How Tollgate's Redis store compares with a plain \`INCR\` (one command, no script: the
floor any Redis limiter pays) and with peer libraries, on the same Redis, in one run.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:redis -- --write
\`\`\`

(\`BENCH_ROUNDS\`, \`BENCH_OPS_64\`, \`BENCH_OPS_1\`, \`BENCH_KEYS\` and \`REDIS_URL\` change the defaults.)

- Each subject decides requests for identities drawn at random from 100,000 keys, through one
  ioredis 6 connection, with 64 or 1 requests in flight, with and without \`enableAutoPipelining\`.
  Limits are high, so every request is admitted (and written). Each configuration runs once per
  round, rounds interleave the subjects, and every figure is the median over the rounds; ratios
  are to the \`INCR\` floor of the same configuration.
- Tollgate uses the Redis server's clock (\`TIME\`) and writes each key with its expiry, as in
  production; "3 rules" charges GCRA, token bucket and sliding window rules in one request.
- Round trips per decision: socket writes per decision with one request in flight and no
  auto-pipelining (each write is one request/response exchange).
- Memory: 100 identities that each made 5 requests under a rule of 100 per minute, measured
  with \`MEMORY USAGE\` (key name, value and overhead) while the state is live. Tollgate keys
  carry the rule id and a hash tag (\`tg:<rule>:{<identity>}\`), so names are longer.
- \\* @upstash/ratelimit talks to Upstash over HTTP, which plain Redis does not speak; it runs
  here on an adapter that serves its \`evalsha\`/\`eval\` calls with ioredis, so its Lua and
  client logic are measured, not an HTTP hop. Its scripts open with
  \`#!lua flags=allow-key-locking\`, which Redis 7.0 refuses; the adapter drops that line and
  runs the body unchanged.
- The machine is shared (2 cores, other work running): compare ratios within one run.`

/** Replaces the "## Redis store" section of docs/benchmarks.md, leaving the rest alone. */
async function writeSection(body: string): Promise<void> {
  const path = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url))
  const doc = await readFile(path, 'utf8').catch(() => '# Benchmarks\n')
  const section = `## Redis store\n\n${INTRO}\n\n${body}\n`
  const start = doc.indexOf('## Redis store')
  if (start === -1) {
    await writeFile(path, `${doc.trimEnd()}\n\n${section}`)
    return
  }
  const next = doc.indexOf('\n## ', start + 1)
  const rest = next === -1 ? '' : doc.slice(next)
  await writeFile(path, `${doc.slice(0, start)}${section}${rest}`)
}

await main()
