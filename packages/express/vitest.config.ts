import { defineProject } from 'vitest/config'
import { sourceConditions } from '../../vitest.shared.ts'

export default defineProject({
  ...sourceConditions,
  test: { name: 'express', include: ['src/**/*.test.ts'] },
})
