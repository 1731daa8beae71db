import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/** The Workers compatibility date that workerd runs our workers with. */
export const COMPATIBILITY_DATE = '2025-12-01'

/**
 * Bundles a worker from the workspace sources into one ES module, as wrangler would. The platform
 * is neutral: no Node built-in resolves, so a `node:` import anywhere is a build error.
 */
export async function bundleWorker(entry: URL): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
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
