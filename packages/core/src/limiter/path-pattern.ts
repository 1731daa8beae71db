import type { ParsedRoute } from '../rules/route.js'

/**
 * A route path compiled for matching without regular expressions: literal segments in lower
 * case, `null` for a `:param`, and whether a trailing `*` takes the rest.
 */
export type PathPattern = {
  readonly segments: readonly (string | null)[]
  readonly rest: boolean
}

export function compilePattern(route: ParsedRoute): PathPattern {
  return {
    segments: route.segments.map((s) => ('literal' in s ? s.literal.toLowerCase() : null)),
    rest: route.rest,
  }
}

/** True for `*` or `/*`: every path. */
export function matchesEveryPath(pattern: PathPattern): boolean {
  return pattern.rest && pattern.segments.length === 0
}

/** The one path an all-literal pattern matches, or undefined for a pattern with params or `*`. */
export function exactPath(pattern: PathPattern): string | undefined {
  if (pattern.rest || pattern.segments.includes(null)) return undefined
  return `/${pattern.segments.join('/')}`
}

/**
 * The form request paths are matched in: lower case, no query string, no trailing slash. The
 * frameworks' default routers ignore case and a trailing slash (Express, koa-router), so a
 * limit that did not would be escaped by writing `/V1/Login/`; matching more never lets a
 * request through that the app would route to the limited handler.
 */
export function normalizePath(path: string): string {
  const query = path.indexOf('?')
  let end = query === -1 ? path.length : query
  while (end > 1 && path.charCodeAt(end - 1) === 47 /* / */) end--
  const trimmed = end === path.length ? path : path.slice(0, end)
  if (trimmed === '') return '/'
  // Most paths are lower case already: checking is cheaper than allocating a copy.
  for (let i = 0; i < trimmed.length; i++) {
    const code = trimmed.charCodeAt(i)
    if ((code >= 65 && code <= 90) || code > 127) return trimmed.toLowerCase()
  }
  return trimmed
}

/** Matches a normalised path segment by segment, with `indexOf` and `startsWith` only. */
export function matchPath(pattern: PathPattern, path: string): boolean {
  if (path.charCodeAt(0) !== 47) return false
  const segments = pattern.segments
  const length = path.length
  let position = 1
  for (let i = 0; i < segments.length; i++) {
    if (position > length) return false
    let end = path.indexOf('/', position)
    if (end === -1) end = length
    const literal = segments[i]
    if (literal === null) {
      if (end === position) return false
    } else if (end - position !== literal!.length || !path.startsWith(literal!, position)) {
      return false
    }
    position = end + 1
  }
  return pattern.rest || position > length || (segments.length === 0 && length === 1)
}

export function matchesAny(patterns: readonly PathPattern[], path: string): boolean {
  for (let i = 0; i < patterns.length; i++) if (matchPath(patterns[i]!, path)) return true
  return false
}
