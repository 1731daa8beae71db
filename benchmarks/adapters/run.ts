/**
 * The adapter benchmark: CPU per request that each rate limiter adds to a bare app, in-process
 * with one request in flight (light-my-request for Express and Koa, `app.request()` for Hono),
 * every variant interleaved in the same run; then, with `--sockets`, a sanity check over real
 * sockets with autocannon. Run with `pnpm --filter @tollgate/benchmarks bench:adapters`.
 */
import { FRAMEWORKS, measureFramework, VARIANTS } from './in-process.js'
import { measureSockets } from './sockets.js'

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=')
    return [name!, value ?? 'true'] as const
  }),
)
const rounds = Number(args.get('rounds') ?? 21)
const perRound = Number(args.get('requests') ?? 2000)
const only = args.get('framework')?.toLowerCase()

const fmt = (value: number) => value.toFixed(1)
const label = (variant: string, peer: string) => (variant === 'peer' ? peer : variant)

console.log(
  `Node ${process.version}, ${rounds} rounds × ${perRound} requests per variant, CPU µs per request (median)\n`,
)
console.log(
  '| framework | bare app | ' +
    VARIANTS.slice(1)
      .map((v) => (v === 'peer' ? 'peer' : v))
      .join(' | ') +
    ' |',
)
console.log(
  '|---|---:|' +
    VARIANTS.slice(1)
      .map(() => '---:|')
      .join(''),
)
for (const framework of FRAMEWORKS) {
  if (only !== undefined && !framework.name.toLowerCase().startsWith(only)) continue
  const result = await measureFramework(framework, { warmup: 5000, rounds, perRound })
  const cells = VARIANTS.slice(1).map((variant) => {
    const added = result.added.get(variant)!
    return variant === 'peer' ? `+${fmt(added)} (${result.peer})` : `+${fmt(added)}`
  })
  console.log(`| ${result.framework} | ${fmt(result.bare)} | ${cells.join(' | ')} |`)
  if (typeof global.gc === 'function') global.gc()
}

if (args.has('sockets')) {
  console.log(
    '\nOver real sockets (autocannon, 1 connection), server CPU µs per request (median)\n',
  )
  console.log('| framework | variant | req/s | server CPU µs/req | added over bare |')
  console.log('|---|---|---:|---:|---:|')
  for (const framework of FRAMEWORKS) {
    if (only !== undefined && !framework.name.toLowerCase().startsWith(only)) continue
    const results = await measureSockets(framework.name, Number(args.get('seconds') ?? 3))
    const bare = results.find((r) => r.variant === 'bare')!
    for (const r of results) {
      const added = r.variant === 'bare' ? '' : `+${fmt(r.cpuPerRequest - bare.cpuPerRequest)}`
      console.log(
        `| ${framework.name} | ${label(r.variant, framework.peer)} | ${Math.round(r.requestsPerSecond)} | ${fmt(r.cpuPerRequest)} | ${added} |`,
      )
    }
  }
}
