import { defineProject } from 'vitest/config'
import { sourceConditions } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceConditions,
  test: { name: 'core', include: ['src/**/*.test.ts'] },
})
