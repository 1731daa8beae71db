import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: { conditions: ['@tollgate/source'] },
  ssr: { resolve: { conditions: ['@tollgate/source'] } },
  test: {
    projects: ['packages/*', 'test', 'examples/*', 'playground'],
  },
})
