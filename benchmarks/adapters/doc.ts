import { replaceDocSection } from '../doc-section.js'

const INTRO = `What each rate limiter adds to a bare app, per request, in CPU time: in process (no network),
one request in flight, one rule whose limit is never reached (the admitted path, which nearly all
traffic takes), every header the limiter has turned on. Peers: express-rate-limit 8 (draft-8 and
\`X-RateLimit-*\`), koa-ratelimit 6 (\`X-RateLimit-*\`), hono-rate-limiter 0.5 (draft-7), each
with its memory store.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:adapters -- --write   # --sockets adds a check over real sockets
pnpm --filter @tollgate/benchmarks bench:adapters -- --header-sets    # Tollgate with each peer's own headers
pnpm --filter @tollgate/benchmarks bench:adapters -- --partition-key  # what pk costs, taken apart
\`\`\`

- **tollgate**: the defaults (the current draft's \`RateLimit-Policy\` and \`RateLimit\`, token
  bucket, memory store). **tollgate, same headers**: Tollgate sending the fields the peer sends;
  read this column to compare the limiting itself, since a field costs the same whoever writes
  it. **tollgate, partition key**: the defaults with \`partitionKey: true\`. **naive**: a
  hand-written token bucket with one header, the floor for any limiter. **fields only**:
  Tollgate's two fields with fixed values, limiting nothing: about half of what **tollgate** adds
  is writing fields through the framework.
- Express and Koa are driven with light-my-request, Hono with \`app.request()\`. CPU time is
  \`process.cpuUsage()\` over blocks of 500 sequential requests, every variant once per round in
  rotating order, 61 rounds, each framework in a process of its own; a variant's figure is the
  lower quartile of its rounds minus the bare app's, the median of 5 runs. One client address,
  then 100,000 addresses in turn, so that every limiter also pays for cold state.`

/** Replaces the "## Adapters" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Adapters', `## Adapters\n\n${INTRO}\n\n${body}\n`)
}
