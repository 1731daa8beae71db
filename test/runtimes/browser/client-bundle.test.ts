/**
 * `@tollgate/client` and `@tollgate/core/fields` bundle for the browser: esbuild with
 * platform=browser and no Node polyfills, so any Node built-in in their import graph fails the
 * build.
 */
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { expect, it } from 'vitest'

const entries = {
  client: '../../../packages/client/src/index.ts',
  fields: '../../../packages/core/src/fields-parse/index.ts',
}

it.each(Object.entries(entries))(
  '%s builds for the browser with no Node built-ins',
  async (_name, path) => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL(path, import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['@tollgate/source', 'browser'],
      target: 'es2022',
      write: false,
      logLevel: 'silent',
      metafile: true,
    })
    expect(result.errors).toEqual([])
    const inputs = Object.keys(result.metafile.inputs)
    expect(
      inputs.filter((input) => input.startsWith('node:') || input.includes('node_modules')),
    ).toEqual([])
    const code = result.outputFiles[0]!.text
    expect(code).not.toMatch(/\brequire\(|\bprocess\.|\bBuffer\b/)
  },
)

it('the browser bundle runs: a client and a limiter are built and answer', async () => {
  const result = await build({
    stdin: {
      contents:
        "import { createClient, localLimiter } from './packages/client/src/index.ts'\n" +
        "const limiter = localLimiter({ algorithm: 'token_bucket', rate: 1, period: '1s', burst: 2 })\n" +
        'export const passes = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]\n' +
        'export const client = typeof createClient({ limiter }).fetch\n',
      resolveDir: fileURLToPath(new URL('../../..', import.meta.url)),
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['@tollgate/source', 'browser'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  const url = `data:text/javascript;base64,${Buffer.from(result.outputFiles[0]!.text).toString('base64')}`
  const bundle = await import(/* @vite-ignore */ url)
  expect(bundle.passes).toEqual([true, true, false])
  expect(bundle.client).toBe('function')
})
