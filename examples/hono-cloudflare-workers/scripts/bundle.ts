import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/**
 * Bundles src/worker.ts into one ES module, as wrangler would. The platform is neutral, so a
 * Node built-in anywhere in the bundle fails the build.
 */
export async function bundleWorker(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../src/worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['@tollgate/source', 'workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}

/** The Workers compatibility date the example is run with. */
export const COMPATIBILITY_DATE = '2025-12-01'
