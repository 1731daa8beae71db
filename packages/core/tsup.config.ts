import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', 'rules-file': 'src/rules/load-text.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
