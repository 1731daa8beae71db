import { build } from 'esbuild'

const r = await build({
  entryPoints: [process.argv[2]!],
  bundle: true,
  minify: true,
  format: 'esm',
  write: false,
  logLevel: 'error',
  plugins: [
    {
      name: 'ext',
      setup(b) {
        b.onResolve({ filter: /^\.\.?\// }, (a) =>
          a.importer.endsWith(process.argv[2]!.split('/').pop()!)
            ? { path: a.path, external: true }
            : undefined,
        )
      },
    },
  ],
})
console.log(r.outputFiles[0]!.text)
