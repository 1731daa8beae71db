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
  the median of 5 runs. Each framework is measured in a process of its own, so what one left in
  the heap does not weigh on the next.
- Why the lower quartile: other work on this machine makes whole blocks of requests cost up to
  twice the CPU time, in phases that can cover one variant's block of a round and not the next
  one's, so the difference within a round swings by more than the figures measured. That work
  only ever adds time; each variant's quieter rounds are its steady figure.
- Garbage: each block of 500 requests starts with an empty young generation and ends with a
  collection of it, inside the measurement; the young generation (32 MB semi-spaces) holds a
  whole block's garbage, so no other collection falls inside a block. Each block thus pays for
  exactly its own garbage, collected as a server with V8's default young generation
  (semi-spaces that grow to 16 MB) collects it: rarely, at a cost that grows with what is still
  alive rather than with what was allocated. (This benchmark used a 2 MB young generation
  before, which collected every few requests, copying each in-flight request's objects and
  charging every byte several times over; the ratios were about the same that way, every
  figure higher.)
- **naive**: a hand-written token bucket with one header (the spec's "no dependencies" example),
  the floor for any limiter. **fields only**: a middleware that writes Tollgate's two default
  fields with fixed values and limits nothing: what the fields themselves cost in that framework.
- **tollgate**: the defaults, the current draft's \`RateLimit-Policy\` and \`RateLimit\` (two
  fields), token bucket, memory store. **tollgate, same headers**: Tollgate configured to send
  what the peer sends: with Express, \`X-RateLimit-*\` and the draft's two fields with a partition
  key (express-rate-limit's draft-8, five fields); with Koa, the three \`X-RateLimit-*\` fields
  (koa-ratelimit); with Hono, the draft-7 \`RateLimit\` and \`RateLimit-Policy\`
  (hono-rate-limiter, which has no \`X-RateLimit-*\`).
- **peer**: express-rate-limit 8 (draft-8 and legacy headers), koa-ratelimit 6 (memory driver),
  hono-rate-limiter 0.5 (draft-7), each with its memory store.
- **tollgate, partition key**: the defaults with \`partitionKey: true\`, hashed with Node's
  synchronous SHA-256 (\`nodeSha256\` from \`@tollgate/core/node\`, which all three adapters pass):
  the partition-key comparison for Koa and Hono, whose peers' fields (three \`X-RateLimit-*\`, two
  draft-7) carry none, so that no setting sends their fields with one.
- Each run measures one client address, then 100,000 addresses in turn (\`--clients\`, a fixed
  random order: a limiter meets an address again only after all the others), so that every
  limiter also pays for cold state: a new bucket, a key string, a partition key not cached.
- The machine is shared (2 cores; other work comes and goes): the load average around the
  recorded run is noted under its tables. Other work inflates every absolute figure (a bare
  Express request costs about 34 µs on a quiet machine, up to 110 µs on a busy day) and leaves a
  few µs of noise in each cell: compare within a row, and read the ratios.

What the figures say: writing response fields through the framework is a large part of what
any limiter costs, and costs most on Koa and Express (light-my-request and Node's \`setHeader\`
both work per field): **fields only**, Tollgate's two default fields written with fixed values,
is about half of what **tollgate** adds; Tollgate's own work (client identity, rule match, store,
header values) is the rest.
A request with one rule allocates about 0.6 KB in core (identities, decision, verdict and two
header values: the adapters write the fields straight from the verdict, building no header
entries or response object); \`bench:allocation\` puts each middleware at 0.7–0.9 KB in all. On
Koa no promise or closure is chained on \`next()\` unless refunds are on (a thrown error's fields
are kept by a \`ctx.onerror\` of the middleware's own). A middleware reads only the identities
its rules key on: with no rule keyed on \`user\`, it never looks for \`req.user\`. That matters
most here on Express: light-my-request re-links the app's request and response prototypes on
every request, so every property looked up through them (or found missing, which walks the
whole chain) misses V8's inline caches, where a server would answer it from them; it weighs on
every Express variant alike.

How the limiting itself compares is read in the **same headers** column: each peer with every
header it has turned on, Tollgate sending the same fields, since a field costs the same whoever
writes it. The **tollgate** column is what an app gets without setting anything: the two IETF
fields, where express-rate-limit (draft-8 and \`X-RateLimit-*\`) sends five and koa-ratelimit
three. \`legacyHeaders: true\` adds GitHub's three \`X-RateLimit-*\` fields, at about what
**same headers** costs on Koa.
Over real sockets the figures swing widely between rounds (a sanity check, not the measure). On
\`@hono/node-server\` every added field costs more, since a response with extra headers leaves
its lightweight-response fast path.`

/** Replaces the "## Adapters" section of docs/benchmarks.md, leaving the other sections alone. */
export function writeSection(body: string): Promise<void> {
  return replaceDocSection('Adapters', `## Adapters\n\n${INTRO}\n\n${body}\n`)
}
