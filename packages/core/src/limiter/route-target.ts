import type { PathPattern } from './path-pattern.js'

/** Where a rule applies: a method (undefined: any) and a path pattern (undefined: any path). */
export type RouteTarget = {
  readonly method: string | undefined
  readonly pattern: PathPattern | undefined
}

/**
 * Does a route's method (undefined: any) cover a request's (undefined: one no rule names)?
 * HEAD runs GET handlers in every framework we adapt, so GET limits cover it.
 */
export function coversMethod(target: string | undefined, method: string | undefined): boolean {
  return target === undefined || target === method || (method === 'HEAD' && target === 'GET')
}
