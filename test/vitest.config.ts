import { defineProject } from 'vitest/config'
import { sourceConditions } from '../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: {
    name: 'integration',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // Property runs against real stores and servers share two cores with everything else: 5 s
    // (vitest's default) times them out on a loaded machine with nothing wrong.
    testTimeout: 30_000,
  },
})
