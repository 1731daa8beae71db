import { defineProject } from 'vitest/config'
import { sourceConditions } from '../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: { name: 'playground', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
})
