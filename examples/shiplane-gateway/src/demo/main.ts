/**
 * `pnpm demo`: the Shiplane gateway under the specification's scenarios, on the memory store,
 * or on Redis shared by two gateway processes when REDIS_URL is set.
 */
import { runDemo } from './run-demo.js'

const { REDIS_URL } = process.env

runDemo({ redisUrl: REDIS_URL || undefined, print: (line) => console.log(line) }).catch(
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  },
)
