import { createHash } from 'node:crypto'
import { libraryLua } from './assemble.js'
import { consumeMainLua, mainHeaderLua, refundMainLua, settleMainLua } from './main.lua.js'
import { penaltiesHeaderLua, penaltiesMainLua } from './penalties.lua.js'
import { renewLua } from './renew.lua.js'

export { ARGS_PER_CHARGE } from './main.lua.js'

/** A Lua script and its SHA1, the name Redis caches it under (EVALSHA). */
export type Script = { readonly sha: string; readonly source: string }

export function script(source: string): Script {
  return { sha: createHash('sha1').update(source).digest('hex'), source }
}

/** Decides a request's charges as one unit and writes them (see main.lua.ts). */
export const consumeScript: Script = script(
  mainHeaderLua(
    'consume',
    'flag (0; 1: denied on another slot;\n-- 2: also reply the time each charge was recorded at)',
  ) +
    libraryLua('consume') +
    consumeMainLua,
)
/** Gives charges back and reports what is left. */
export const refundScript: Script = script(
  mainHeaderLua('refund', 'the time the charges were made') + libraryLua('refund') + refundMainLua,
)
/**
 * Replaces charges' estimates with what the requests really cost (see main.lua.ts), one slot's
 * worth per call.
 */
export const settleScript: Script = script(
  mainHeaderLua('settle', 'the time the charges were made') + libraryLua('settle') + settleMainLua,
)

/**
 * Consumes with penalties, and answers the operator's peek, reset, block and unblock (see
 * penalties.lua.ts): one call each.
 */
export const penaltiesScript: Script = script(
  `${penaltiesHeaderLua}\n${libraryLua('consume')}${penaltiesMainLua}`,
)

/** Renews the leases of concurrency slots still held (see renew.lua.ts). */
export const renewScript: Script = script(renewLua)

/**
 * The store's Lua scripts and their SHA1s, for operators who pre-load them (`SCRIPT LOAD`) or
 * allow them by SHA. The store loads them itself on first use.
 */
export const redisScripts: {
  readonly consume: Script
  readonly refund: Script
  readonly settle: Script
  readonly renew: Script
  readonly penalties: Script
} = {
  consume: consumeScript,
  refund: refundScript,
  settle: settleScript,
  renew: renewScript,
  penalties: penaltiesScript,
}
