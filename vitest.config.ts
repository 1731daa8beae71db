import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: { conditions: ['@tollgate/source'] },
  ssr: { resolve: { conditions: ['@tollgate/source'] } },
  test: {
    projects: ['packages/*', 'test', 'examples/*', 'playground'],
    // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine, whose
    // second core then idles while the tests wait on Redis and child processes.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
})
