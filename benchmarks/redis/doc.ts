import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { replaceDocSection } from '../doc-section.js'

const INTRO = `How Tollgate's Redis store compares with a plain \`INCR\` (one command, no script: the
floor any Redis limiter pays) and with peer libraries, on the same Redis, in one run.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:redis -- --write
\`\`\`

(\`BENCH_ROUNDS\`, \`BENCH_OPS_64\`, \`BENCH_OPS_1\`, \`BENCH_KEYS\` and \`REDIS_URL\` change the defaults;
\`BENCH_ONLY\`, a regular expression, measures only the subjects it names, beside the floor.)

- Each subject decides requests for identities drawn at random from 100,000 keys, through one
  ioredis 6 connection, with 64 or 1 requests in flight, with and without \`enableAutoPipelining\`.
  Limits are high, so every request is admitted (and written). Each configuration runs once per
  round, rounds interleave the subjects, and every figure is the median over the rounds; ratios
  are to the \`INCR\` floor of the same configuration.
- Tollgate runs as users get it (the built package, default options, the default 250 ms
  \`timeoutMs\`: a call slower than that would fail the run): on the Redis server's clock
  (\`TIME\`), each key written with its expiry; a request with nothing of its rule set on its way
  goes out at once through the one-request script, and requests arriving behind a call go
  together at the end of the turn, up to 32 per script call of their rule (\`coalesce\`, see
  docs/concepts/redis.md). "3 rules" charges GCRA, token bucket and sliding window rules in one
  request, through the script of that set of rules, coalesced the same way (up to 10 requests,
  32 keys, per call); its decisions/s count requests, each three decisions.
- **one-key GCRA script (reference)**: the classic GCRA script and nothing around it (\`TIME\`,
  \`GET\`, \`SET … PX\` at the new arrival time, reply \`{ allowed, retry }\`), called with ioredis
  directly: what any script that reads, decides and writes a state per request costs.
- **tollgate gcra, its script called bare**: Tollgate's own one-request GCRA script, exactly as
  the store generates it, sent with ioredis's plain \`evalsha\` and no store around it: the floor
  under the \`tollgate gcra\` row at 1 in flight.
- Round trips per decision: socket writes per decision with one request in flight and no
  auto-pipelining (each write is one request/response exchange).
- CPU per decision: the Node process's (\`process.cpuUsage\`) and the Redis server's
  (\`INFO cpu\`), over the runs without auto-pipelining (both also at 1 in flight, where each
  request is its own call and pays the socket handling too); "of which in the call" is Redis's
  time inside the subject's own calls (\`INFO commandstats\`: its scripts' \`EVALSHA\`, which
  includes the commands they run, or its \`INCR\`), the part that differs between subjects.
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
throughput follows whichever spends more CPU per decision (the CPU columns). Every command has
a fixed price on both sides (the client builds and writes it, Redis reads it and writes the
reply), and a script adds its own (starting the script, \`TIME\`); a script that reads a state,
decides and writes it back with an exact expiry costs Redis about twice what \`INCR\` does, so
the bare one-key GCRA script, one call per request, stays near 0.65 × the \`INCR\` floor.
Tollgate pays those fixed prices once per batch of one-rule requests instead of once per
request: its Node and Redis CPU per decision fall to about the \`INCR\` floor's, and the bucket
and window rows decide about as many requests per second as one \`INCR\` per request, or more.
The sliding log keeps one entry per admitted request, so it is exact in every rolling window; a
log of up to 32 entries (every key here: 100,000 identities share the load) is one packed string,
read and written as the bucket states are, and costs Redis a little more per decision than they
do (it copies its entries each time). Longer logs are lists, read and trimmed in place (see
docs/concepts/redis.md). Batches stay small (32 keys) so that Redis runs one while the gateway
reads the replies of the one before. With ioredis's auto-pipelining every command of a turn
leaves in one write and the two processes take turns, which lowers every script-based row;
Tollgate's rows stay ahead of every peer. With one request in flight there is nothing to batch:
every subject waits on the round trip, and a Tollgate request goes out at once through its
one-request script (the section "Redis store: a lone request taken apart" says where its time
goes). Three rules in one request pay three reads and writes, in
calls of 10 requests; before they had a script of their own (each request one call of the
general script) they made 0.11 × as many requests per second as the floor, and now 0.45–0.64 ×,
each request three decisions.

How far every row sits from the floor moves between runs and between days on this shared
machine, the floor itself included (\`INCR\` at 64 in flight has measured 58,000 to 108,000 per
second, its Node CPU per decision 9.8 to 14.7 µs). For the same store code, the one-rule rows
measured 0.68–0.96 × the floor in a run on a busier day and 1.21–1.89 × in the runs of the day
recorded here. p99 at 64 in flight moves the most: a pause anywhere (either process descheduled
by other work, Redis deleting a mass of expired keys) delays every request in flight at once,
and for the same code the one-rule rows' p99 measured 0.34 to 1.59 × the best peer's in three
runs of one day (the recorded one: 0.66–0.99).

What a decision costs Redis inside a script, measured with 32 keys per \`EVALSHA\`, pipelined, and
\`INFO cpu\` (per key): 32 \`INCR\`s 1.5 µs; 32 \`GET\`s 1.5; \`GET\`, then \`SET … PXAT\` with
the new state, and four integers replied, 5.3; Tollgate's one-rule GCRA script 5.5, whether the
key had expired or not. Reading a state and writing it back with an exact expiry is the price;
the algorithm's arithmetic is lost in the noise.

Redis CPU per call of one request, measured apart with \`redis-benchmark -n 300000 -c 8 -P 32 -r 100000 EVALSHA
<sha> 1 k:__rand_int__ …\` (pipelined, so networking is amortised) and \`INFO cpu\` before and
after, this machine: \`INCR\` about 1.4 µs; rate-limit-redis's script 4–7 µs; the reference GCRA
script about 11; Tollgate's one-rule GCRA script about 11.4, down from 13.2 when its algorithm ran
inside Lua functions (closures made on every call, with their upvalues, cost about as much as the
arithmetic), and its token bucket script 12.4–12.9, down from 13.8 when the state was text
(\`string.format\` and \`string.match\`; it is now packed with \`struct\`). At 64 in flight without
pipelining Redis spends about 6 µs more per call on the socket, which a batch shares. On the Node
side the store's own work is about 0.4 µs per request (measured against a client that answers at
once); the rest is the client's (ioredis) and the socket's, also paid once per batch.`

/** Replaces the "## Redis store" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Redis store', `## Redis store\n\n${INTRO}\n\n${body}\n`)
}

// `node --import tsx redis/doc.ts <results.md>` writes results saved from an earlier run.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== undefined) {
  await writeSection(await readFile(process.argv[2], 'utf8'))
}
