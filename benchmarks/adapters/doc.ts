import { replaceDocSection } from '../doc-section.js'

const INTRO = `What each rate limiter adds to a bare app, per request, in CPU time: in-process (no network),
one request in flight, every variant interleaved in the same run, one rule whose limit is never
reached (the admitted path, which nearly all traffic takes), every header the limiter has turned on.

\`\`\`sh
pnpm --filter @tollgate/benchmarks bench:adapters -- --sockets --write
\`\`\`

- Express and Koa are driven with light-my-request, Hono with \`app.request()\`. CPU time is
  \`process.cpuUsage()\` (user + system) over 500 sequential requests, each followed by a turn of
  the event loop so that the work servers defer (\`setImmediate\`) runs too and only one request
  is ever in flight. Each round runs every variant once, in rotating order; 61 rounds; a
  variant's figure is the lower quartile of its rounds minus the bare app's, and the table shows
  the median of 3 runs.
- Why the lower quartile: other work on this machine makes whole blocks of requests cost up to
  twice the CPU time, in phases that can cover one variant's block of a round and not the next
  one's, so the difference within a round swings by more than the figures measured. That work
  only ever adds time; each variant's quieter rounds are its steady figure.
- The young generation is 2 MB (\`--max-semi-space-size=2\`): with V8's default (up to 16 MB) a
  scavenge comes about once per round, always at the same place in the rotation, so a few of
  each variant's blocks carry a whole pause and the rest none. With a small one, every block
  pays for its own garbage; a scavenge then costs more per byte, which weighs on the limiters
  that allocate more.
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
- The machine is shared (2 cores, load average 2–7 from other work during these runs), which
  inflates every absolute figure (a bare Express request costs 50 to 110 µs here, depending on the
  day) and leaves a few µs
  of noise in each cell: compare within a row, and read the ratios.

What the figures say: writing response fields through the framework dominates, and costs most
on Koa (light-my-request and Node's \`setHeader\` both work per field): **fields only** is most of
what **tollgate** costs. Tollgate's own work (client identity, rule match, store, header values)
is the rest, a few µs on this loaded machine. A request with one rule allocates about 0.6 KB in
core (identities, decision, verdict and two header values: the adapters write the fields
straight from the verdict, building no header entries or response object) and up to 0.6 KB
more in the adapter, mostly Koa's promise and closure chained on \`next()\`; \`bench:allocation\`
measures both, about 1.2 KB per request in all with Koa, 0.9 KB with Hono and 0.7 KB with
Express. With Express, Tollgate adds a little over a third of what express-rate-limit adds.
With its defaults Tollgate writes five fields where koa-ratelimit writes three and
hono-rate-limiter two. On Hono it adds a little less than the peer (0.95 here; the full runs
before gave 0.85, 0.88 and 0.88). On Koa it adds more (1.32 here; Koa-only runs of the same day
1.09–1.24; the full runs before 1.03, 1.05 and 1.00): the two fields koa-ratelimit does not send
cost about 3 µs there, and Tollgate's own work 2–5 µs over the fields (**tollgate** minus
**fields only**), of which its functions are about 2% of a request's CPU time in a profile and
the garbage it leaves (about 0.85 KB a request) most of the rest. Sending the same fields as
the peer, Tollgate adds clearly less than each peer; set \`legacyHeaders: false\` or
\`standardHeaders: false\` to send fewer. Over real sockets the figures swing widely between
rounds (a sanity check, not the measure); on \`@hono/node-server\` every added field costs
more, since a response with extra headers leaves its lightweight-response fast path.`

/** Replaces the "## Adapters" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Adapters', `## Adapters\n\n${INTRO}\n\n${body}\n`)
}
