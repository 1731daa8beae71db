// Instructions Redis runs per decision, one request in flight, counted by callgrind: unlike
// times, the same for the same binary and inputs whatever else the machine runs. Start a Redis
// of its own under callgrind, then point this at it:
//
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p.out redis-server --port 7401 --save '' &
//   REDIS_URL=redis://127.0.0.1:7401 CALLGRIND_PID=$! node --import tsx redis/script-instructions.ts
//
// Counts the whole server (reading the command, the script, the reply, the event loop), so
// every subject pays the same socket handling: the differences are the commands themselves.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { clear, connect, identities, runLoad } from './measure.js'
import {
  GCRA_REFERENCE,
  INCR,
  PEERS,
  STATE_FLOOR,
  STATE_FLOOR_CALLER_TIME,
  TOLLGATE,
} from './subjects.js'

const {
  REDIS_URL = 'redis://127.0.0.1:7401',
  CALLGRIND_PID,
  CALLGRIND_OUT = '/tmp/cg',
} = process.env
if (CALLGRIND_PID === undefined) throw new Error('set CALLGRIND_PID to the Redis under callgrind')
const { BENCH_CALLS = '1000', BENCH_KEYS = '100000' } = process.env
const CALLS = Number(BENCH_CALLS)
// Identities drawn from: with the default, nearly every call meets a new one (its GET finds
// nothing); with a few (BENCH_KEYS=100), returning clients, whose states are read back.
const KEYS = Number(BENCH_KEYS)
const { BENCH_ONLY } = process.env
const only = BENCH_ONLY === undefined ? undefined : new RegExp(BENCH_ONLY)

/** Total instructions in the dumps callgrind writes for `pid` after `callgrind_control -d`. */
function dumpedInstructions(): number {
  const folder = dirname(CALLGRIND_OUT)
  let total = 0
  for (const file of readdirSync(folder)) {
    if (!file.startsWith(`cg.${CALLGRIND_PID}.out.`)) continue
    const text = readFileSync(join(folder, file), 'utf8')
    total += Number(/^summary: (\d+)/m.exec(text)?.[1] ?? /^totals: (\d+)/m.exec(text)?.[1] ?? 0)
    rmSync(join(folder, file))
  }
  return total
}

const control = (flag: string) =>
  execFileSync('callgrind_control', [flag, CALLGRIND_PID!], { stdio: 'ignore' })
const admin = await connect(REDIS_URL, false)
const subjects = [
  INCR,
  GCRA_REFERENCE,
  STATE_FLOOR,
  STATE_FLOOR_CALLER_TIME,
  ...TOLLGATE,
  ...PEERS,
].filter((s) => only === undefined || only.test(s.name))
console.log('| subject | Redis instructions per decision |\n| --- | ---: |')
for (const subject of subjects) {
  const redis = await connect(REDIS_URL, false)
  const decide = await subject.setup(redis)
  await runLoad(decide, identities(KEYS, 200, 5), 1)
  control('-z')
  dumpedInstructions()
  await runLoad(decide, identities(KEYS, CALLS, 6), 1)
  control('-d')
  const perCall = dumpedInstructions() / CALLS
  console.log(`| ${subject.name} | ${Math.round(perCall).toLocaleString('en-US')} |`)
  redis.disconnect()
  await clear(admin, subject.prefix)
}
admin.disconnect()
