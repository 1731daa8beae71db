import { replaceDocSection } from '../doc-section.js'

const INTRO = `What each rate limiter adds to a bare app, per request, in CPU time: in-process (no network),
one request in flight, every variant interleaved in the same run, one rule whose limit is never
reached (the admitted path, which nearly all traffic takes), every header the limiter has turned on.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:adapters -- --sockets --write
\`\`\`

- Express and Koa are driven with light-my-request, Hono with \`app.request()\`. CPU time is
  \`process.cpuUsage()\` (user + system) over 1000 sequential requests; each round runs every
  variant once, in rotating order; a variant's figure is the median over rounds of (variant −
  bare app in the same round), and the table shows the median of 3 runs.
- **naive**: a hand-written token bucket with one header (the spec's "no dependencies" example),
  the floor for any limiter. **fields only**: a middleware that writes Tollgate's five default
  fields with fixed values and limits nothing: what the fields themselves cost in that framework.
- **tollgate**: the defaults, \`X-RateLimit-Limit/-Remaining/-Reset\` plus \`RateLimit-Policy\`
  and \`RateLimit\` (five fields), token bucket, memory store. **tollgate, same headers**: Tollgate
  configured to send what the peer sends: with Express, the same five fields with a partition key
  (express-rate-limit's draft-8); with Koa, the three \`X-RateLimit-*\` fields (koa-ratelimit);
  with Hono, the draft-7 \`RateLimit\` and \`RateLimit-Policy\` (hono-rate-limiter, which has no
  \`X-RateLimit-*\`).
- **peer**: express-rate-limit 8 (draft-8 and legacy headers), koa-ratelimit 6 (memory driver),
  hono-rate-limiter 0.5 (draft-7), each with its memory store.
- The machine is shared (2 cores, load average 3–6 from other work during these runs), which
  inflates every absolute figure (a bare Express request costs about 60 µs here) and leaves a few µs
  of noise in each cell: compare within a row, and read the ratios.

What the figures say: writing response fields through the framework dominates. **fields only**
costs most of what **tollgate** costs; Tollgate's own work (client identity, rule match, store,
header values) is the difference, a few µs on this loaded machine (a CPU profile of the Express
run puts Tollgate's own functions at about 5% of the request). Sending the same fields as the
peer, Tollgate adds less than each peer. With its defaults it writes five fields where
koa-ratelimit writes three and hono-rate-limiter two, and on those two frameworks it then costs
somewhat more than the peer (the ratios above 1); set \`legacyHeaders: false\` or
\`standardHeaders: false\` to send fewer. Over real sockets the figures swing widely between
rounds (a sanity check, not the measure); on \`@hono/node-server\` every added field costs
more, since a response with extra headers leaves its lightweight-response fast path.`

/** Replaces the "## Adapters" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Adapters', `## Adapters\n\n${INTRO}\n\n${body}\n`)
}
