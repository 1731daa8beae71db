import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // No source maps: dist/ is unminified with the sources' names, so a stack trace into it reads
  // as one into src/ would; maps of sources the tarball does not ship only weigh on installs.
  sourcemap: false,
  target: 'es2022',
})
