import { defineProject } from 'vitest/config'
import { sourceConditions } from '../../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: { name: 'example-express-prometheus', include: ['src/**/*.test.ts'] },
})
