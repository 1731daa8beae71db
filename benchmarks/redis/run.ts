// Tollgate's Redis store against the plain-INCR floor and peer libraries, on one Redis, in one
// run: decisions/s and latency at 1 and 64 in flight, with and without ioredis auto-pipelining;
// round trips per decision; Redis memory per key. Medians of several interleaved rounds.
//
//   pnpm --filter @tollgate/benchmarks bench:redis            # print the tables
//   pnpm --filter @tollgate/benchmarks bench:redis -- --write # also update docs/benchmarks.md
//   BENCH_ONLY='gcra|3 rules' pnpm --filter @tollgate/benchmarks bench:redis  # some subjects

import type { Redis } from 'ioredis'
import { writeSection } from './doc.js'
import {
  callUsBetween,
  clear,
  connect,
  countWrites,
  identities,
  type Load,
  median,
  memoryPerKey,
  redisCallUs,
  runLoad,
} from './measure.js'
import { benchmarkRedis } from './own-server.js'
import {
  GCRA_REFERENCE,
  INCR,
  overBudget,
  PEERS,
  STATE_FLOOR,
  type Subject,
  TOLLGATE,
  TOLLGATE_GCRA_KEPT,
  TOLLGATE_GCRA_SCRIPT,
  TOLLGATE_LIMITER,
} from './subjects.js'

/** Seconds of CPU the Redis server has used (user + system), from INFO cpu. */
async function redisCpuSeconds(admin: Redis): Promise<number> {
  const info = (await admin.info('cpu')) as string
  const read = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? 0)
  return read('used_cpu_user') + read('used_cpu_sys')
}

/**
 * Keys Redis has expired so far (INFO stats). A state kept exactly until it is fresh again
 * expires within the measured load when the rule lets it refill fast (the benchmark's limits
 * admit everything: a GCRA state is fresh again 0.06 ms after a request); a counter kept for
 * a whole window (rate-limit-redis's minute) expires after the subject's turn, so its deletion
 * is never measured. Reported per decision, so that the difference shows.
 */
async function redisExpiredKeys(admin: Redis): Promise<number> {
  const info = (await admin.info('stats')) as string
  return Number(/expired_keys:(\d+)/.exec(info)?.[1] ?? 0)
}

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
// REDIS_URL measures that server as it is; by default, an empty server of the benchmark's own.
const redisServer = await benchmarkRedis()
const REDIS_URL = redisServer.url
const KEYS = env('BENCH_KEYS', 100_000)
const OPS = { 1: env('BENCH_OPS_1', 10_000), 64: env('BENCH_OPS_64', 40_000) } as const
const ROUNDS = env('BENCH_ROUNDS', 5)
// Requests that warm each new connection and store before a pass at 1 in flight.
const WARM_UP_1 = env('BENCH_WARM_1', 2_000)
// BENCH_ONLY (a regular expression) measures only the subjects it matches, besides the floor;
// the GCRA row with its keys kept a minute is measured only when BENCH_ONLY names it.
const { BENCH_ONLY } = process.env
const only = BENCH_ONLY === undefined ? undefined : new RegExp(BENCH_ONLY)
const SUBJECTS: readonly Subject[] = [
  INCR,
  GCRA_REFERENCE,
  STATE_FLOOR,
  TOLLGATE_GCRA_SCRIPT,
  ...TOLLGATE,
  ...TOLLGATE_LIMITER,
  ...(only?.test(TOLLGATE_GCRA_KEPT.name) ? [TOLLGATE_GCRA_KEPT] : []),
  ...PEERS,
].filter((subject) => only === undefined || subject === INCR || only.test(subject.name))
const ALL_CONFIGS = [
  { inFlight: 64, auto: false },
  { inFlight: 64, auto: true },
  { inFlight: 1, auto: false },
  { inFlight: 1, auto: true },
] as const
// BENCH_IN_FLIGHT=1 (or 64) measures only that many in flight: shorter runs on a loaded machine.
const { BENCH_IN_FLIGHT } = process.env
const CONFIGS = ALL_CONFIGS.filter(
  (config) => BENCH_IN_FLIGHT === undefined || config.inFlight === Number(BENCH_IN_FLIGHT),
)
type ConfigName = `${number}-${boolean}`
const configName = (c: (typeof CONFIGS)[number]): ConfigName => `${c.inFlight}-${c.auto}`

type Measured = Load & {
  readonly nodeUs: number
  readonly redisUs: number
  /** Redis's time inside the subject's calls (see `redisCallUs`), per decision. */
  readonly callUs: number
  /** Keys Redis expired during the load, per decision (see `redisExpiredKeys`). */
  readonly expired: number
}

async function measure(
  subject: Subject,
  config: (typeof CONFIGS)[number],
  round: number,
  admin: Redis,
): Promise<Measured> {
  const redis = await connect(REDIS_URL, config.auto)
  try {
    const decide = await subject.setup(redis)
    // Made before the warm-up: at 64 in flight its collections move them out of the young
    // generation, where copying tens of thousands of new strings would fall in the measured
    // load's collections.
    const ids = identities(KEYS, OPS[config.inFlight], round + 1)
    // Warm-up, scripts loaded.
    const warmUp = config.inFlight === 64 ? 10_000 : WARM_UP_1
    await runLoad(decide, identities(KEYS, warmUp, 1000 + round), config.inFlight)
    const node = process.cpuUsage()
    const redisBefore = await redisCpuSeconds(admin)
    const callsBefore = await redisCallUs(admin)
    const expiredBefore = await redisExpiredKeys(admin)
    const load = await runLoad(decide, ids, config.inFlight)
    const { user, system } = process.cpuUsage(node)
    const redisUs = ((await redisCpuSeconds(admin)) - redisBefore) * 1e6
    const callUs = callUsBetween(callsBefore, await redisCallUs(admin))
    const expired = (await redisExpiredKeys(admin)) - expiredBefore
    return {
      ...load,
      nodeUs: (user + system) / ids.length,
      redisUs: redisUs / ids.length,
      callUs: callUs / ids.length,
      expired: expired / ids.length,
    }
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

type Summary = (
  name: string,
  config: ConfigName,
) => {
  rate: number
  p50: number
  p99: number
  nodeUs: number
  redisUs: number
  callUs: number
  expired: number
}

/** The targets, checked against this run's medians. */
function targets(
  summary: Summary,
  rounds: (name: string, config: ConfigName) => readonly Measured[],
  configs: readonly { readonly inFlight: number }[],
  sizes: ReadonlyMap<string, { trips: number; bytes: number; keysPerIdentity: number }>,
): string[] {
  const ours = TOLLGATE.map((s) => s.name)
  // The targets compare one decision with one INCR: the one-rule rows. Three rules in one
  // request are three decisions, reported beside them.
  const oneRule = ours.filter((name) => !name.includes('3 rules'))
  const threeRules = ours.find((name) => name.includes('3 rules'))!
  const oneKey = ours.find((name) => name.includes('one key per identity'))!
  const peers = PEERS.map((s) => s.name)
  const range = (values: number[]) =>
    `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`
  const verdict = (ok: boolean) => (ok ? 'met' : '**not met**')
  const p99 = (config: ConfigName) => {
    const best = Math.min(...peers.map((name) => summary(name, config).p99))
    return oneRule.map((name) => summary(name, config).p99 / best)
  }
  // Paired by round: a lone request's rate moves with the machine from minute to minute, so
  // each round's rate is divided by the best peer's in that round, and the median taken.
  const roundRatios = (name: string, config: ConfigName) => {
    const best = rounds(peers[0]!, config).map((_, r) =>
      Math.max(...peers.map((peer) => rounds(peer, config)[r]!.rate)),
    )
    return rounds(name, config).map((run, r) => run.rate / best[r]!)
  }
  const alone = (auto: boolean) => oneRule.map((name) => median(roundRatios(name, `1-${auto}`)))
  const aloneRounds = (auto: boolean) => oneRule.flatMap((name) => roundRatios(name, `1-${auto}`))
  const trips = ours.map((name) => sizes.get(name)!.trips)
  const lines = ['**Targets** (from the issue; ranges are over the one-rule Tollgate rows)', '']
  if (configs.some((c) => c.inFlight === 64)) {
    const floor = summary(INCR.name, '64-false').rate
    const plain = oneRule.map((name) => summary(name, '64-false').rate / floor)
    const bestPeerAuto = Math.max(...peers.map((name) => summary(name, '64-true').rate))
    const auto = oneRule.map((name) => summary(name, '64-true').rate / bestPeerAuto)
    const reference = summary(GCRA_REFERENCE.name, '64-false').rate / floor
    const threeRulesPlain = (3 * summary(threeRules, '64-false').rate) / floor
    const oneKeyRate = summary(oneKey, '64-false').rate / floor
    const oneKeyBytes = sizes.get(oneKey)!.bytes * sizes.get(oneKey)!.keysPerIdentity
    lines.push(
      `- 64 in flight, no auto-pipelining: ${range(plain)} × the INCR floor; target ≥ 0.90: ${verdict(Math.min(...plain) >= 0.9)}. (The one-key GCRA script reaches ${reference.toFixed(2)} ×; three rules in one request, counted as three decisions, ${threeRulesPlain.toFixed(2)} ×.)`,
      `- 64 in flight, auto-pipelining: ${range(auto)} × the best peer; target > 1 (ahead of every peer): ${verdict(Math.min(...auto) > 1)}.`,
      `- p99 at 64 in flight, as a multiple of the best peer's p99: ${range(p99('64-false'))} without auto-pipelining, ${range(p99('64-true'))} with it; target ≤ 1: ${verdict(Math.max(...p99('64-false'), ...p99('64-true')) <= 1)}.`,
      `- Three rules on one identity, one key per identity, 64 in flight, no auto-pipelining: ${oneKeyRate.toFixed(2)} × INCR in requests/s; target ≥ 0.6: ${verdict(oneKeyRate >= 0.6)}. Redis memory per identity: ${Math.round(oneKeyBytes)} B; target ≤ 200: ${verdict(oneKeyBytes <= 200)}.`,
    )
  }
  if (configs.some((c) => c.inFlight === 64)) {
    // Through the API apps and adapters call: `limiter.decide` over the store's defaults.
    const floor = summary(INCR.name, '64-false').rate
    const [one, three, threeIdentity] = TOLLGATE_LIMITER.map(
      (s) => summary(s.name, '64-false').rate / floor,
    )
    lines.push(
      `- Through \`limiter.decide\`, 64 in flight, no auto-pipelining: one GCRA rule ${one!.toFixed(2)} × INCR, target ≥ 0.9: ${verdict(one! >= 0.9)}; three rules on one identity ${three!.toFixed(2)} × INCR in requests/s with the default layout (${threeIdentity!.toFixed(2)} × with \`layout: 'identity'\` named), target ≥ 0.6: ${verdict(three! >= 0.6)}.`,
    )
  }
  if (configs.some((c) => c.inFlight === 1)) {
    lines.push(
      `- 1 in flight (medians of per-round ratios): ${range(alone(false))} × the best peer without auto-pipelining, ${range(alone(true))} with it; target ≥ 1: ${verdict(Math.min(...alone(false), ...alone(true)) >= 1)}. Single rounds: ${range(aloneRounds(false))} and ${range(aloneRounds(true))}.`,
    )
  }
  lines.push(
    `- Round trips per decision: ${range(trips)}, also for three rules in one request; target exactly 1: ${verdict(trips.every((t) => t === 1))}.`,
  )
  return lines
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
  const results = new Map<string, Map<ConfigName, Measured[]>>()
  for (const subject of SUBJECTS) results.set(subject.name, new Map())
  const admin = await connect(REDIS_URL, false)
  const info = (await admin.info('server')) as string
  const version = /redis_version:(\S+)/.exec(info)?.[1]

  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order, so that what drifts within a round (the machine, Redis's memory)
    // falls on no subject more than on another.
    const order = round % 2 === 0 ? SUBJECTS : [...SUBJECTS].reverse()
    for (const config of CONFIGS) {
      for (const subject of order) {
        // Every subject starts from a keyspace with none of the benchmark's keys: it pays for
        // expiring its own keys, never for those the subjects before it left.
        await clear(admin, 'bench:')
        const load = await measure(subject, config, round, admin)
        const byConfig = results.get(subject.name)!
        byConfig.set(configName(config), [...(byConfig.get(configName(config)) ?? []), load])
        process.stderr.write(
          `round ${round + 1}/${ROUNDS} ${config.inFlight} in flight${config.auto ? ', auto-pipelining' : ''}: ${subject.name} ${Math.round(load.rate)}/s, p99 ${load.p99Ms.toFixed(2)} ms\n`,
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
      nodeUs: median(loads.map((l) => l.nodeUs)),
      redisUs: median(loads.map((l) => l.redisUs)),
      callUs: median(loads.map((l) => l.callUs)),
      expired: median(loads.map((l) => l.expired)),
    }
  }
  const measured = (name: string, config: ConfigName) => results.get(name)!.has(config)
  const none = {
    rate: Number.NaN,
    p50: Number.NaN,
    p99: Number.NaN,
    nodeUs: Number.NaN,
    redisUs: Number.NaN,
    callUs: Number.NaN,
    expired: Number.NaN,
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
  if (CONFIGS.some((c) => c.inFlight === 64)) table('64 requests in flight', 64)
  if (CONFIGS.some((c) => c.inFlight === 1)) table('1 request in flight', 1)
  lines.push(
    '**Round trips, CPU (no auto-pipelining) and memory**',
    '',
    '| subject | round trips per decision | CPU per decision, Node (µs), 64 in flight | Redis (µs), 64 in flight | Node (µs), 1 in flight | Redis (µs), 1 in flight | of which in the call (µs) | keys expired per decision, 1 in flight | Redis keys per identity | key name (B) | MEMORY USAGE per key (B) | per identity (B) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  )
  for (const subject of SUBJECTS) {
    const size = sizes.get(subject.name)!
    const cpu = measured(subject.name, '64-false') ? summary(subject.name, '64-false') : none
    const alone = measured(subject.name, '1-false') ? summary(subject.name, '1-false') : none
    lines.push(
      `| ${subject.name} | ${size.trips.toFixed(2)} | ${cpu.nodeUs.toFixed(1)} | ${cpu.redisUs.toFixed(1)} | ${alone.nodeUs.toFixed(1)} | ${alone.redisUs.toFixed(1)} | ${alone.callUs.toFixed(1)} | ${alone.expired.toFixed(2)} | ${size.keysPerIdentity.toFixed(0)} | ${Math.round(size.keyLength)} | ${Math.round(size.bytes)} | ${Math.round(size.bytes * size.keysPerIdentity)} |`,
    )
  }
  // The targets compare with subjects a filtered run may have left out.
  if (only === undefined) {
    const rounds = (name: string, config: ConfigName) => results.get(name)!.get(config)!
    lines.push('', ...targets(summary, rounds, CONFIGS, sizes), '')
  }
  const where = redisServer.own
    ? "a server of the benchmark's own (empty: no other scripts held)"
    : REDIS_URL.replace(/\/\/.*@/, '//')
  const meta = `Redis ${version} on ${where}, ioredis 6, ${KEYS.toLocaleString('en-US')} keys, ${ROUNDS} rounds (medians), ${OPS[64].toLocaleString('en-US')} decisions per run at 64 in flight and ${OPS[1].toLocaleString('en-US')} at 1.`
  const budget = `Tollgate calls over the store's default 250 ms budget (counted as failed, the request admitted as a fail-open rule would): ${overBudget.calls}.`
  const body = [meta, budget, '', ...lines].join('\n')
  process.stdout.write(`${body}\n`)
  if (process.argv.includes('--write')) {
    if (only !== undefined || CONFIGS.length < ALL_CONFIGS.length) {
      throw new Error('--write records a full run: unset BENCH_ONLY and BENCH_IN_FLIGHT')
    }
    await writeSection(body)
  }
}

try {
  await main()
} finally {
  await redisServer.stop()
}
