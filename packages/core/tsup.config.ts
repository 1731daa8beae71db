import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'rules-file': 'src/rules/load-text.ts',
    store: 'src/store/index.ts',
    adapter: 'src/adapter/index.ts',
    node: 'src/node/index.ts',
    fields: 'src/fields-parse/index.ts',
    observe: 'src/observe/index.ts',
    simulate: 'src/simulate/index.ts',
    usage: 'src/usage/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // No source maps: dist/ is unminified with the sources' names, so a stack trace into it reads
  // as one into src/ would; maps of sources the tarball does not ship only weigh on installs.
  sourcemap: false,
  target: 'es2022',
  // Shared chunks, so the entries share one copy of the errors in CJS too.
  splitting: true,
})
