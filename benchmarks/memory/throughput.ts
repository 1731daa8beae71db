/**
 * One contender, one scenario, in a process of its own (so no other store's heap slows its
 * garbage collector): decisions per CPU second over several repetitions.
 *
 *   node --conditions=@tollgate/source --import tsx memory/throughput.ts <contender> <scenario> [keys]
 *
 * `hot`: one key, over and over. `rotation`: `keys` distinct keys in a fixed random order, all
 * inserted by a warm-up pass first, so the measured passes decide for established keys; the key
 * strings are built once, up front. `built`: the same, but each key string is built for its
 * request, as a server builds it from the request's address.
 */
import { contenderNamed, type Decide } from './contenders.js'
import { ipKey, median, shuffledOrder } from './keys.js'

const [name = '', scenario = 'hot', keysArg] = process.argv.slice(2)
const contender = contenderNamed(name)
const keyCount = scenario === 'hot' ? 1 : Number(keysArg ?? 1_000_000)
const keys =
  scenario === 'hot'
    ? ['ip:203.0.113.7']
    : scenario === 'rotation'
      ? Array.from({ length: keyCount }, (_, i) => ipKey(i))
      : []
const order = shuffledOrder(keyCount)
const keyAt =
  scenario === 'built' ? (i: number) => ipKey(order[i]!) : (i: number) => keys[order[i]!]!
const decide = contender.create(keyCount)
const perRep = scenario === 'hot' ? (contender.async ? 1_000_000 : 4_000_000) : keyCount
const reps = 5

let cursor = 0
function runSync(run: Decide, count: number): number {
  let allowed = 0
  for (let i = 0; i < count; i++) {
    if (run(keyAt(cursor))) allowed++
    cursor = cursor + 1 === keyCount ? 0 : cursor + 1
  }
  return allowed
}

async function runAsync(run: Decide, count: number): Promise<number> {
  let allowed = 0
  for (let i = 0; i < count; i++) {
    if (await run(keyAt(cursor))) allowed++
    cursor = cursor + 1 === keyCount ? 0 : cursor + 1
  }
  return allowed
}

const run = (count: number) => (contender.async ? runAsync(decide, count) : runSync(decide, count))

// Warm-up: every key once (the rotation's keys are then all established), and the JIT settled.
await run(Math.max(keyCount, 200_000))
const cpuRates: number[] = []
const wallRates: number[] = []
let allowed = 0
for (let rep = 0; rep < reps; rep++) {
  const cpu = process.cpuUsage()
  const wall = performance.now()
  allowed += await run(perRep)
  const wallMs = performance.now() - wall
  const used = process.cpuUsage(cpu)
  cpuRates.push(perRep / ((used.user + used.system) / 1e6))
  wallRates.push(perRep / (wallMs / 1e3))
}
process.stdout.write(
  `${JSON.stringify({
    name,
    scenario,
    keys: keyCount,
    perCpuSecond: median(cpuRates),
    perWallSecond: median(wallRates),
    allowedShare: allowed / (perRep * reps),
  })}\n`,
)
process.exit(0)
