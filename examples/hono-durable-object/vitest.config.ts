import { defineProject } from 'vitest/config'
import { sharedModules, sourceConditions } from '../../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: {
    ...sharedModules,
    name: 'example-hono-durable-object',
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
  },
})
