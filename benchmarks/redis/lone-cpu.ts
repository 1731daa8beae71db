// Node CPU of a lone request, user and kernel apart: Tollgate's one-request GCRA script called
// bare, the same rule through the store, and rate-limit-redis, one request in flight without
// auto-pipelining, on a Redis of the benchmark's own. Each pass is a process of its own (a
// fresh heap and JIT), passes alternate the subjects; the kernel's share (the socket) moves
// between passes more than the store's own work weighs, so the user share is the one to compare.
//
//   pnpm --filter @tollgate/benchmarks bench:redis-lone-cpu
//   PASSES=5 OPS=40000 pnpm --filter @tollgate/benchmarks bench:redis-lone-cpu
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { connect, identities, median, runLoad } from './measure.js'
import { benchmarkRedis } from './own-server.js'
import { PEERS, type Subject, TOLLGATE, TOLLGATE_GCRA_SCRIPT } from './subjects.js'

const SUBJECTS: Record<string, Subject> = {
  bare: TOLLGATE_GCRA_SCRIPT,
  store: TOLLGATE[0]!,
  peer: PEERS[0]!,
}

type Pass = { rate: number; userUs: number; systemUs: number }

/** One pass, in this process: `node lone-cpu.ts <subject> <url> <ops>` prints a Pass as JSON. */
async function pass(name: string, url: string, ops: number): Promise<Pass> {
  const redis = await connect(url, false)
  try {
    const decide = await SUBJECTS[name]!.setup(redis)
    await runLoad(decide, identities(100_000, 5_000, 3), 1)
    const ids = identities(100_000, ops, 5)
    const before = process.cpuUsage()
    const load = await runLoad(decide, ids, 1)
    const { user, system } = process.cpuUsage(before)
    return { rate: load.rate, userUs: user / ops, systemUs: system / ops }
  } finally {
    redis.disconnect()
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
    '| subject | decisions/s (median) | Node user CPU µs, median (range) | Node kernel CPU µs |',
  )
  console.log('| --- | ---: | ---: | ---: |')
  for (const [name, runs] of results) {
    console.log(
      `| ${SUBJECTS[name]!.name} | ${Math.round(median(runs.map((r) => r.rate))).toLocaleString('en-US')} | ${spread(runs.map((r) => r.userUs))} | ${spread(runs.map((r) => r.systemUs))} |`,
    )
  }
}
