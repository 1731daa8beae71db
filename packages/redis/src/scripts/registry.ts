import type { AlgorithmName } from '@tollgate/core'
import { concurrencyLua } from './concurrency.lua.js'
import { fixedWindowLua } from './fixed-window.lua.js'
import { gcraLua } from './gcra.lua.js'
import { leakyBucketLua } from './leaky-bucket.lua.js'
import { leakyQueueLua } from './leaky-queue.lua.js'
import type { LuaAlgorithm } from './lua-algorithm.js'
import { slidingLogLua } from './sliding-log.lua.js'
import { slidingWindowLua } from './sliding-window.lua.js'
import { tokenBucketLua } from './token-bucket.lua.js'

/**
 * The algorithms the scripts run, by their name in the core: every built-in algorithm has one
 * (the type makes a missing one a compile error). The general scripts branch over them in this
 * order; concurrency, whose state is a set of leases rather than one value, comes last.
 */
export const LUA_ALGORITHMS: { readonly [name in AlgorithmName]: LuaAlgorithm } = {
  token_bucket: tokenBucketLua,
  gcra: gcraLua,
  leaky_bucket: leakyBucketLua,
  fixed_window: fixedWindowLua,
  sliding_log: slidingLogLua,
  sliding_window: slidingWindowLua,
  leaky_queue: leakyQueueLua,
  concurrency: concurrencyLua,
}

/** The Lua of the core algorithm named `name`, or undefined for one the scripts do not run. */
export function luaAlgorithmNamed(name: string): LuaAlgorithm | undefined {
  return Object.hasOwn(LUA_ALGORITHMS, name) ? LUA_ALGORITHMS[name as AlgorithmName] : undefined
}
