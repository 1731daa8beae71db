import { defineProject } from 'vitest/config'
import { sourceConditions } from '../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: {
    name: 'integration',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // Property tests replay hundreds of traces against Redis and the stores: on a loaded
    // machine (two cores shared by several runs) they took over 5 s. Nothing here waits on
    // time passing, so a longer bound hides no timing bug.
    testTimeout: 30_000,
  },
})
