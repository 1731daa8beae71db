import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { replaceDocSection } from '../doc-section.js'

const INTRO = `Decisions per second against one Redis, as multiples of a plain \`INCR\` in the same round (one
command, no script: the floor any Redis limiter pays), at 64 and at 1 request in flight, beside
the peer libraries, in one run.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:redis -- --write
\`\`\`

(\`BENCH_ONLY\`, a regular expression, measures only the subjects it names, beside the floor;
\`BENCH_IN_FLIGHT=1\` or \`64\` only that many in flight; \`REDIS_URL\` measures another server.)

- The benchmark starts a redis-server of its own (empty, persistence off): a server holding
  thousands of cached scripts makes every script call slower.
- Each subject decides requests for identities drawn at random from 100,000 keys through one
  ioredis 6 connection, every request admitted; rounds interleave the subjects and every figure
  is the median over the rounds. Tollgate runs as users get it (the built package, default
  options), through \`limiter.decide\` (the "limiter.decide" rows) and through the store alone.
- At 64 in flight Tollgate sends the requests that arrive behind a call together, up to 32 per
  script call (\`coalesce\`, see docs/concepts/redis.md); at 1 in flight every subject waits on
  its round trip.
- \\* @upstash/ratelimit runs on an adapter that serves its \`evalsha\`/\`eval\` with ioredis:
  its Lua and client logic are measured, not an HTTP hop.`

/** Replaces the "## Redis store" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Redis store', `## Redis store\n\n${INTRO}\n\n${body}\n`)
}

// `node --import tsx redis/doc.ts <results.md>` writes results saved from an earlier run.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== undefined) {
  await writeSection(await readFile(process.argv[2], 'utf8'))
}
