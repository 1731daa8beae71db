/**
 * `bench:adapters`: what each adapter adds to a request, against its peers. By default the
 * tables of every framework and variant (tables.ts), then the express-rate-limit facade beside
 * express-rate-limit (facade.ts). A flag runs one part alone instead:
 *
 *   pnpm --filter @tollgate/benchmarks bench:adapters -- --write            # tables, then facade
 *   pnpm --filter @tollgate/benchmarks bench:adapters -- --facade --runs=3
 *   pnpm --filter @tollgate/benchmarks bench:adapters -- --header-sets --runs=3
 *   pnpm --filter @tollgate/benchmarks bench:adapters -- --partition-key
 *
 * The other options (--runs, --rounds, --requests, --clients, --framework, --sockets, --write)
 * are read by the parts, each as its header says.
 */
const PARTS = {
  facade: () => import('./facade.js'),
  'header-sets': () => import('./header-sets.js'),
  'partition-key': () => import('./partition-key.js'),
} as const

const chosen = (Object.keys(PARTS) as Array<keyof typeof PARTS>).filter((part) =>
  process.argv.includes(`--${part}`),
)
if (chosen.length === 0) {
  await import('./tables.js')
  await PARTS.facade()
} else {
  for (const part of chosen) await PARTS[part]()
}

// A module (its parts are awaited at top level).
export {}
