import { defineProject } from 'vitest/config'

export default defineProject({
  test: { name: 'redis', include: ['src/**/*.test.ts'] },
})
