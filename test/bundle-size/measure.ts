/**
 * Bundle sizes as an edge app pays them: each fixture bundled the way wrangler bundles a Worker
 * (esbuild, Workers conditions, no Node built-ins), from the packages' built dist/ as npm would
 * install them (no source condition), minified, then gzip-compressed.
 */
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build, type Metafile } from 'esbuild'

export type BundleSize = { minified: number; gzip: number; metafile: Metafile; code: string }

export const FIXTURES = [
  'hono-bare',
  'hono-one-rule',
  'hono-composed',
  'hono-rules-file',
  'hono-durable-object',
  'core-check',
  'core-one-export',
] as const
export type Fixture = (typeof FIXTURES)[number]

export function measure(fixture: Fixture): Promise<BundleSize> {
  return measureEntry(new URL(`./fixtures/${fixture}.ts`, import.meta.url))
}

/**
 * Any entry module, its imports resolved from where it lives. `fromSource` bundles the packages'
 * src/ instead (the `@tollgate/source` condition), so that the metafile names their modules.
 */
export async function measureEntry(entry: URL, fromSource = false): Promise<BundleSize> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: [...(fromSource ? ['@tollgate/source'] : []), 'workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    // Provided by workerd: a Worker's bindings at module scope.
    external: ['cloudflare:workers'],
    target: 'es2022',
    minify: true,
    metafile: true,
    write: false,
    logLevel: 'silent',
  })
  const code = result.outputFiles[0]!.contents
  return {
    minified: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    metafile: result.metafile,
    code: result.outputFiles[0]!.text,
  }
}

/** The packages' modules a fixture's bundle holds, bundled from src/ (paths from the root). */
export async function sourceModules(fixture: Fixture): Promise<string[]> {
  const size = await measureEntry(new URL(`./fixtures/${fixture}.ts`, import.meta.url), true)
  const output = Object.values(size.metafile.outputs)[0]!
  return Object.entries(output.inputs)
    .filter(([path, input]) => path.startsWith('packages/') && input.bytesInOutput > 0)
    .map(([path]) => path)
}

/** The inputs that weigh most in a bundle, in minified bytes. */
export function heaviestInputs(size: BundleSize, count: number): Array<[string, number]> {
  const output = Object.values(size.metafile.outputs)[0]!
  return Object.entries(output.inputs)
    .map(([path, input]): [string, number] => [
      path.replace(/^.*node_modules\//, ''),
      input.bytesInOutput,
    ])
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
}
