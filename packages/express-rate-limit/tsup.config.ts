import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // No source maps: dist/ is unminified with the sources' names, as in @tollgate/express.
  sourcemap: false,
  target: 'es2022',
})
