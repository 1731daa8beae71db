// `bench:redis-node-side`: what a decision costs the JavaScript side of the Redis store, Redis
// left out (a client that answers every call a microtask later). By default the store's own
// `consume` beside rate-limit-redis (store-node-side.ts); with `--limiter`, a request through
// `limiter.decide` beside the bare `consume` (limiter-node-side.ts).
//
//   pnpm --filter @tollgate/benchmarks bench:redis-node-side
//   pnpm --filter @tollgate/benchmarks bench:redis-node-side -- --limiter
//
// ROUNDS and OPS change either run; BEFORE (the store), or BEFORE_CORE and BEFORE_REDIS (the
// limiter), add another build beside this one, as each part's header says.
if (process.argv.includes('--limiter')) await import('./limiter-node-side.js')
else await import('./store-node-side.js')

// A module (its parts are awaited at top level).
export {}
