import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { replaceDocSection } from '../doc-section.js'

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
- Tollgate runs as users get it (the built package), on the Redis server's clock (\`TIME\`), and
  writes each key with its expiry, as in production. A one-rule request runs the rule's own
  script (parameters written into the source); "3 rules" charges GCRA, token bucket and sliding
  window rules in one request, through the general script.
- **one-key GCRA script (reference)**: the classic GCRA script and nothing around it (\`TIME\`,
  \`GET\`, \`SET … PX\` at the new arrival time, reply \`{ allowed, retry }\`), called with ioredis
  directly: what any script that reads, decides and writes a state per request costs.
- Round trips per decision: socket writes per decision with one request in flight and no
  auto-pipelining (each write is one request/response exchange).
- CPU per decision: the Node process's (\`process.cpuUsage\`) and the Redis server's
  (\`INFO cpu\`), over the 64-in-flight runs without auto-pipelining.
- Memory: 100 identities that each made 5 requests under a rule of 100 per minute, measured
  with \`MEMORY USAGE\` (key name, value and overhead) while the state is live. Tollgate keys
  carry the rule id and a hash tag (\`tg:<rule>:{<identity>}\`), so names are longer.
- \\* @upstash/ratelimit talks to Upstash over HTTP, which plain Redis does not speak; it runs
  here on an adapter that serves its \`evalsha\`/\`eval\` calls with ioredis, so its Lua and
  client logic are measured, not an HTTP hop. Its scripts open with
  \`#!lua flags=allow-key-locking\`, which Redis 7.0 refuses; the adapter drops that line and
  runs the body unchanged.
- The machine is shared (2 cores, other work running): compare ratios within one run.

Reading the results: at 64 in flight the gateway process and Redis share two cores, and
throughput follows whichever spends more CPU per decision (the CPU columns). A plain \`INCR\` is
the cheapest thing Redis does; any script that reads a state, decides and writes it back with an
exact expiry costs Redis about twice as much per decision, so on this machine even the bare
one-key GCRA script reaches only about 0.65 × the \`INCR\` floor. Tollgate's one-rule scripts
reach 0.67–0.87 × that script in the run below (see the targets); its GCRA costs Redis about as
much as the reference, and Node about 1.5 µs more (a wider reply, \`now\`, remaining and reset,
and the store's own work). With auto-pipelining,
Node and Redis take turns (a batch goes out, Redis runs all of it, the replies come back), so
throughput follows the sum of both CPUs, and the limiter whose script does the least in Redis
leads: rate-limit-redis (\`INCR\`, \`PTTL\` on a key that lives for the whole window; a fixed
window on the gateway's clock, no retry time). Tollgate's scripts pay for exact decisions on the
server's clock with an expiry at the moment the state is fresh again, in one round trip for any
number of rules. With one request in flight every subject waits on the round trip and they all
sit close together.

Redis CPU per call, measured apart with \`redis-benchmark -n 300000 -c 8 -P 32 -r 100000 EVALSHA
<sha> 1 k:__rand_int__ …\` (pipelined, so networking is amortised) and \`INFO cpu\` before and
after, this machine: \`INCR\` about 1.4 µs; rate-limit-redis's script 4–7 µs; the reference GCRA
script about 11; Tollgate's one-rule GCRA script about 11.4, down from 13.2 when its algorithm ran
inside Lua functions (closures made on every call, with their upvalues, cost about as much as the
arithmetic), and its token bucket script 12.4–12.9, down from 13.8 when the state was text
(\`string.format\` and \`string.match\`; it is now packed with \`struct\`). At 64 in flight without
pipelining Redis spends about 6 µs more per decision on the socket. On the Node side the store's
own work is about 0.4 µs per call (measured against a client that answers at once); the rest is
the client's (ioredis) and the socket's.`

/** Replaces the "## Redis store" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Redis store', `## Redis store\n\n${INTRO}\n\n${body}\n`)
}

// `node --import tsx redis/doc.ts <results.md>` writes results saved from an earlier run.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== undefined) {
  await writeSection(await readFile(process.argv[2], 'utf8'))
}
