import { defineProject } from 'vitest/config'
import { sharedModules, sourceConditions } from '../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: {
    ...sharedModules,
    name: 'integration',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // Property tests replay hundreds of traces: CPU-bound, and on a loaded shared machine well
    // past the 5 s default. Nothing here waits for time to pass (clocks are injected).
    testTimeout: 60_000,
  },
})
