/**
 * `bench:concurrency`: what a concurrency rule's take and release cost against an admitted
 * token-bucket request. By default on the memory store, in process CPU time (memory-store.ts);
 * with `--redis`, on the Redis store, its round trips and time per request (redis.ts). Both on
 * the built packages, as an app runs them.
 *
 *   pnpm --filter @tollgate/benchmarks bench:concurrency -- --rounds=9 --requests=200000
 *   pnpm --filter @tollgate/benchmarks bench:concurrency -- --redis --rounds=5 --requests=2000
 */
if (process.argv.includes('--redis')) await import('./redis.js')
else await import('./memory-store.js')

// A module (its parts are awaited at top level).
export {}
