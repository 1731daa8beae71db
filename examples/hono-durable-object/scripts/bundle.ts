import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

export { COMPATIBILITY_DATE } from '@tollgate/test-utils'

/**
 * Bundles src/worker.ts into one ES module, as wrangler would: no Node built-ins, and
 * `cloudflare:workers` left for the runtime to provide. `minify` as a deployment would.
 */
export async function bundleWorker({ minify = false } = {}): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../src/worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['@tollgate/source', 'workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:workers'],
    target: 'es2022',
    minify,
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}

/** The Miniflare options of the worker: the LIMITER binding as wrangler.toml declares it. */
export const LIMITER_BINDING = {
  LIMITER: { className: 'TollgateLimiter', useSQLite: true },
} as const
