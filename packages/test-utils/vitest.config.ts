import { defineProject } from 'vitest/config'
import { sourceConditions } from '../../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: { name: 'test-utils', include: ['src/**/*.test.ts'], passWithNoTests: true },
})
