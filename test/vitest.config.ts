import { defineProject } from 'vitest/config'
import { sourceConditions } from '../vitest.shared.js'

export default defineProject({
  ...sourceConditions,
  test: { name: 'integration', include: ['**/*.test.ts'], exclude: ['**/node_modules/**'] },
})
