import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { replaceDocSection } from '../doc-section.js'

const INTRO = `How Tollgate's Redis store compares with a plain \`INCR\` (one command, no script: the
floor any Redis limiter pays) and with peer libraries, on the same Redis, in one run.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:redis -- --write
\`\`\`

(\`BENCH_ROUNDS\`, \`BENCH_OPS_64\`, \`BENCH_OPS_1\`, \`BENCH_KEYS\` change the defaults;
\`BENCH_ONLY\`, a regular expression, measures only the subjects it names, beside the floor;
\`BENCH_IN_FLIGHT=1\` or \`64\` only that many in flight.)

- The benchmark starts a redis-server of its own (empty, persistence off) and stops it at the
  end; \`REDIS_URL\` measures another server as it is. A server's script cache weighs on every
  script call: each script it holds grows the Lua heap that Redis's collector steps through on
  script calls, and with 6,700 held (what a test run used to leave on the shared server) an
  empty script's call cost 1.2 µs instead of 0.65, every script row inflated alike or worse.

- Each subject decides requests for identities drawn at random from 100,000 keys, through one
  ioredis 6 connection, with 64 or 1 requests in flight, with and without \`enableAutoPipelining\`.
  Limits are high, so every request is admitted (and written). Each configuration runs once per
  round, rounds interleave the subjects (in reverse order every other round, so that drift within
  a round falls on none more than another), each subject starts from a keyspace without the
  benchmark's keys (it pays for expiring its own keys only), and every figure is the median over
  the rounds; ratios are to the \`INCR\` floor of the same configuration. The 1-in-flight target
  is judged on ratios paired by round (each round's rate over the best peer's in that round).
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
the bare one-key GCRA script, one call per request, stays near 0.8 × the \`INCR\` floor.
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
goes, and "Redis store: a lone request on a server of its own" what is left of the difference).
Three rules in one request pay three reads and writes, in calls of 10 requests; before they had
a script of their own (each request one call of the general script) they made 0.11 × as many
requests per second as the floor, and now about 0.5 ×, each request three decisions.

How far every row sits from the floor moves between runs and between days on this shared
machine, the floor itself included: \`INCR\` at 64 in flight measured 58,000 to 108,000 per
second on the shared server, on days when it held thousands of scripts, and 206,000 to 212,000
on a server of the benchmark's own in the eight runs of 5 December 2026. For the same store
code, the one-rule rows measured 0.68–0.96 × the floor on a busier day, 1.21–1.89 × on a quiet
one, and 1.03–1.54 × on a server of their own. p99 at 64 in flight moves the most: a pause
anywhere (either process descheduled by other work, Redis deleting a mass of expired keys)
delays every request in flight at once, and a subject that decides faster finishes its fixed
count of decisions sooner, so one pause holds a larger share of them. In five runs of one tree
on 5 December 2026 the one-rule rows' p99 was 0.61–0.85 × the best peer's in three, and 1.23–1.60
and 3.08–3.70 × in two runs a few minutes apart, every Tollgate row alike.

What a decision costs Redis inside a script, measured with 32 keys per \`EVALSHA\`, pipelined, and
\`INFO cpu\` (per key): 32 \`INCR\`s 1.5 µs; 32 \`GET\`s 1.5; \`GET\`, then \`SET … PXAT\` with
the new state, and four integers replied, 5.3; Tollgate's one-rule GCRA script 5.5, whether the
key had expired or not. Reading a state and writing it back with an exact expiry is the price;
the algorithm's arithmetic is lost in the noise.

Redis's time per call of one request, measured apart on an empty server of its own with
\`redis-benchmark -n 300000 -c 4 -P 16 -r 100000 EVALSHA <sha> 1 k:__rand_int__ …\` (pipelined,
so networking is amortised) and \`INFO commandstats\` (\`usec_per_call\` of \`EVALSHA\`), two
passes on 5 December 2026: a script that only returns 1 costs 0.65–0.78 µs; \`TIME\` adds about
0.5, \`GET\` 0.2–0.5, \`SET … PXAT\` 1.1–1.3 (a plain \`SET\` 0.6–0.8: the expiry is the
rest), replying three integers instead of one 0.4; rate-limit-redis's script (\`INCR\`, \`PTTL\`)
2.2–2.6; \`TIME\`, \`GET\`, \`SET … PXAT\` and a 3-integer reply with no decision 3.5–3.7;
Tollgate's one-request GCRA script 4.2–4.8 and its fixed window 4.5–4.6. On the same server
holding 6,700 other scripts: 1.2, 4.7, 5.8 and 3.4 µs for the empty script, the no-decision
floor, Tollgate's GCRA and rate-limit-redis's. (This paragraph used to give 11.4 µs for
Tollgate's GCRA script and 4–7 for rate-limit-redis's, from the shared server.) At 64 in flight
without pipelining Redis spends about 6 µs more per call on the socket, which a batch shares. On the Node
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
