import { execFileSync } from 'node:child_process'
import { connect, identities, runLoad } from './measure.js'
import { TOLLGATE } from './subjects.js'
const pid = process.env.CALLGRIND_PID!
const subject = TOLLGATE.find((s) => s.name.includes(process.env.PROBE ?? 'one key'))!
const redis = await connect('redis://127.0.0.1:7501', false)
const decide = await subject.setup(redis)
await runLoad(decide, identities(100_000, 200, 5), 1)
execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' })
await runLoad(decide, identities(100_000, 300, 6), 1)
execFileSync('callgrind_control', ['-d', pid], { stdio: 'ignore' })
redis.disconnect()
