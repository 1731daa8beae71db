// A lone request taken apart, one request in flight without auto-pipelining, on a Redis of the
// benchmark's own. Subjects: a script that reads the clock, GETs and SETs with no decision (the
// floor under any exact script on the server's clock), the same on the caller's time (the two
// apart are what TIME costs), Tollgate's one-request GCRA script called bare, the same rule
// through the store, and rate-limit-redis. For each: Node's CPU, user and kernel apart; where
// a request's wall-clock time goes, from stamps on the client's socket (in Node, from a reply's
// arrival to the next request's write: the store's and the client's work on the critical path;
// away, from the write to the reply's arrival: the kernel, Redis waking, reading, running the
// call and answering); and Redis's time inside the call (INFO commandstats). Each pass is a
// process of its own (a fresh heap and JIT), passes alternate the subjects; the kernel's share
// moves between passes more than the store's own work weighs.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-lone-cpu
//   PASSES=5 OPS=40000 pnpm --filter @tollgate/benchmarks bench:redis-lone-cpu
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Redis } from 'ioredis'
import {
  callUsBetween,
  clear,
  connect,
  identities,
  median,
  redisCallUs,
  runLoad,
} from './measure.js'
import { benchmarkRedis } from './own-server.js'
import {
  PEERS,
  STATE_FLOOR,
  STATE_FLOOR_CALLER_TIME,
  type Subject,
  TOLLGATE,
  TOLLGATE_GCRA_SCRIPT,
} from './subjects.js'

const SUBJECTS: Record<string, Subject> = {
  floor: STATE_FLOOR,
  'floor-caller-time': STATE_FLOOR_CALLER_TIME,
  bare: TOLLGATE_GCRA_SCRIPT,
  store: TOLLGATE[0]!,
  peer: PEERS[0]!,
}

type Pass = {
  rate: number
  userUs: number
  systemUs: number
  /** Mean µs from a reply's arrival to the next request's write. */
  inNodeUs: number
  /** Mean µs from a request's write to its reply's arrival. */
  awayUs: number
  /** Redis's µs inside the call, per decision. */
  callUs: number
}

/**
 * Stamps each write to the client's socket and each arrival of data on it. With one request in
 * flight and no auto-pipelining, write i is request i and arrival i its reply.
 */
function stampSocket(redis: Redis, count: number) {
  type Stamped = {
    write: (...args: unknown[]) => boolean
    prependListener(event: 'data', listener: () => void): unknown
    removeListener(event: 'data', listener: () => void): unknown
  }
  const stream = (redis as unknown as { stream: Stamped }).stream
  const writes = new Float64Array(count)
  const arrivals = new Float64Array(count)
  let w = 0
  let a = 0
  const write = stream.write
  stream.write = function (this: unknown, ...args: unknown[]) {
    if (w < count) writes[w++] = performance.now()
    return write.apply(this, args)
  }
  const arrived = () => {
    if (a < count) arrivals[a++] = performance.now()
  }
  stream.prependListener('data', arrived)
  return {
    /** Mean µs in Node and away, over the requests stamped. */
    means(): { inNodeUs: number; awayUs: number } {
      stream.write = write
      stream.removeListener('data', arrived)
      if (w !== count || a !== count) throw new Error(`${w} writes, ${a} arrivals for ${count}`)
      let inNode = 0
      let away = 0
      for (let i = 0; i < count; i++) {
        away += arrivals[i]! - writes[i]!
        if (i + 1 < count) inNode += writes[i + 1]! - arrivals[i]!
      }
      return { inNodeUs: (inNode / (count - 1)) * 1000, awayUs: (away / count) * 1000 }
    },
  }
}

/** One pass, in this process: `node lone-cpu.ts <subject> <url> <ops>` prints a Pass as JSON. */
async function pass(name: string, url: string, ops: number): Promise<Pass> {
  const redis = await connect(url, false)
  const admin = await connect(url, false)
  try {
    const subject = SUBJECTS[name]!
    const decide = await subject.setup(redis)
    await runLoad(decide, identities(100_000, 5_000, 3), 1)
    // As in bench:redis, every subject decides for identities it holds no state of: a counter
    // left by an earlier pass would spare a peer the expiry its first request sets.
    await clear(admin, subject.prefix)
    const ids = identities(100_000, ops, 5)
    const calls = await redisCallUs(admin)
    const stamps = stampSocket(redis, ops)
    const before = process.cpuUsage()
    const load = await runLoad(decide, ids, 1)
    const { user, system } = process.cpuUsage(before)
    const callUs = callUsBetween(calls, await redisCallUs(admin))
    return {
      rate: load.rate,
      userUs: user / ops,
      systemUs: system / ops,
      ...stamps.means(),
      callUs: callUs / ops,
    }
  } finally {
    redis.disconnect()
    admin.disconnect()
  }
}

const [, , subjectArg, urlArg, opsArg] = process.argv
if (subjectArg !== undefined && urlArg !== undefined) {
  process.stdout.write(JSON.stringify(await pass(subjectArg, urlArg, Number(opsArg))))
} else {
  const passes = Number(process.env['PASSES'] ?? 3)
  const ops = Number(process.env['OPS'] ?? 20_000)
  const server = await benchmarkRedis()
  const results = new Map<string, Pass[]>()
  try {
    for (let p = 0; p < passes; p++) {
      const names = Object.keys(SUBJECTS)
      for (const name of p % 2 === 0 ? names : names.reverse()) {
        const out = execFileSync(
          process.execPath,
          ['--import', 'tsx', fileURLToPath(import.meta.url), name, server.url, String(ops)],
          { encoding: 'utf8' },
        )
        results.set(name, [...(results.get(name) ?? []), JSON.parse(out) as Pass])
        process.stderr.write(`pass ${p + 1}/${passes}: ${name} ${out}\n`)
      }
    }
  } finally {
    await server.stop()
  }
  const spread = (values: number[]) =>
    `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`
  console.log(`${passes} passes of ${ops.toLocaleString('en-US')} lone decisions per subject.\n`)
  console.log(
    '| subject | decisions/s (median) | Node user CPU µs, median (range) | Node kernel CPU µs | in Node, reply to next write (µs) | away, write to reply (µs) | of which Redis in the call (µs) |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [name, runs] of results) {
    const of = (field: keyof Pass) => spread(runs.map((r) => r[field]))
    console.log(
      `| ${SUBJECTS[name]!.name} | ${Math.round(median(runs.map((r) => r.rate))).toLocaleString('en-US')} | ${of('userUs')} | ${of('systemUs')} | ${of('inNodeUs')} | ${of('awayUs')} | ${of('callUs')} |`,
    )
  }
}
