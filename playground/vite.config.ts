import { defineConfig } from 'vite'

// A static site: relative asset paths, so dist/ works from any folder or host. Workspace
// packages resolve to their TypeScript sources, so the page needs no prior package build.
export default defineConfig({
  base: './',
  resolve: { conditions: ['@tollgate/source'] },
  server: { port: 7300, strictPort: false },
  preview: { port: 7301, strictPort: false },
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true },
})
