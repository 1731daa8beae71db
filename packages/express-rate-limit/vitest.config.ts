import { defineProject } from 'vitest/config'
import { sourceConditions } from '../../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: { name: 'express-rate-limit', include: ['src/**/*.test.ts'] },
})
