import { defineProject } from 'vitest/config'
import { sharedModules, sourceConditions } from '../../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  // Property tests are CPU-bound; on a loaded shared machine they outlast the 5 s default.
  test: { ...sharedModules, name: 'core', include: ['src/**/*.test.ts'], testTimeout: 60_000 },
})
