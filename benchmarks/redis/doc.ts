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
- Tollgate uses the Redis server's clock (\`TIME\`) and writes each key with its expiry, as in
  production; "3 rules" charges GCRA, token bucket and sliding window rules in one request.
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

Reading the results: at 64 in flight the gateway process and Redis share two cores, so
throughput follows the CPU that both spend per decision (the CPU columns). A plain \`INCR\` is the
cheapest thing Redis does; any \`EVALSHA\` costs it several times more, and a script that reads
a state, writes it back and sets its exact expiry (\`TIME\`, \`GET\`, \`SET … PXAT\`) costs more
again than one that only increments a counter (rate-limit-redis: \`PTTL\` then \`INCR\`, a fixed
window with the gateway's clock and no retry time). Tollgate's scripts pay that for exact
decisions on the server's clock with exact expiry, in one round trip for any number of rules.

Where a one-charge GCRA decision's Redis time goes, measured apart (\`EVALSHA\` in a loop on fixed
arguments, \`usec_per_call\` from \`INFO commandstats\`, this machine): about 8 µs inside the
script, of which an empty script with the same arguments and reply takes about 2, \`TIME\` 0.7,
\`GET\` and \`SET … PXAT\` about 3, and the arithmetic, parsing and function calls the rest; the
function closures a script creates per call cost about 0.02 µs each. Under the benchmark's high
limits a GCRA or bucket key is fresh again about 1 ms after each request, so nearly every
decision also creates a key that Redis soon expires. On the Node side the store's own work is
under 1 µs per call (keys, arguments, deadline, reply); the rest is the client's.`

/** Replaces the "## Redis store" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Redis store', `## Redis store\n\n${INTRO}\n\n${body}\n`)
}

// `node --import tsx redis/doc.ts <results.md>` writes results saved from an earlier run.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== undefined) {
  await writeSection(await readFile(process.argv[2], 'utf8'))
}
