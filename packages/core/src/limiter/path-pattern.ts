import type { ParsedRoute } from '../rules/route.js'
import { decodePercents } from './percent-decoding.js'

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
    segments: route.segments.map((s) =>
      'literal' in s ? decodePercents(s.literal).toLowerCase() : null,
    ),
    rest: route.rest,
  }
}

/** The one path an all-literal pattern matches, or undefined for a pattern with params or `*`. */
export function exactPath(pattern: PathPattern): string | undefined {
  if (pattern.rest || pattern.segments.includes(null)) return undefined
  return `/${pattern.segments.join('/')}`
}

const SLASH = 47
const BACKSLASH = 92
const QUESTION_MARK = 63
const HASH = 35
const PERCENT = 37

/**
 * The form request paths are matched in: the path alone (no scheme and host, query or
 * fragment), lower case, `\` read as `/`, no trailing slash, escapes decoded as the routers
 * decode parameters (see `decodePercents`). The frameworks' default routers
 * ignore case and a trailing slash (Express, koa-router), and Node's `url.parse`, which they
 * route with, takes the path out of an absolute-form target (`GET http://host/v1/login`), drops
 * a `#fragment` and turns backslashes into slashes: a limit that did not would be escaped by
 * writing `/V1/Login/`, `/v1/login#x` or `http://x/v1\login`. Matching more never lets a request
 * through that the app would route to the limited handler.
 */
export function normalizePath(target: string): string {
  const start = target.charCodeAt(0) === SLASH ? 0 : absoluteFormPathStart(target)
  // Most paths are lower case, with nothing to drop or turn: checking is cheaper than copying.
  let plain = true
  let end = start
  for (; end < target.length; end++) {
    const code = target.charCodeAt(end)
    if (code === QUESTION_MARK || code === HASH) break
    if ((code >= 65 && code <= 90) || code > 127 || code === BACKSLASH || code === PERCENT)
      plain = false
  }
  const path = plain && start === 0 && end === target.length ? target : target.slice(start, end)
  if (plain) return withoutTrailingSlashes(path)
  // Slashes first: an encoded backslash (`%5C`) is a character of its segment, not a separator.
  return withoutTrailingSlashes(decodePercents(path.replaceAll('\\', '/')).toLowerCase())
}

function withoutTrailingSlashes(path: string): string {
  let end = path.length
  while (end > 1 && path.charCodeAt(end - 1) === SLASH) end--
  if (end === 0) return '/'
  return end === path.length ? path : path.slice(0, end)
}

/**
 * Where the path of `scheme://authority/path` starts (slashes either way, as `url.parse` reads
 * them); the end of the authority when it has no path. A target of another form is matched as
 * it is (it matches no rule's route, and the frameworks route it nowhere).
 */
function absoluteFormPathStart(target: string): number {
  const colon = target.indexOf(':')
  if (colon <= 0 || !isScheme(target, colon)) return 0
  if (!isSlash(target.charCodeAt(colon + 1)) || !isSlash(target.charCodeAt(colon + 2))) return 0
  let i = colon + 3
  while (i < target.length) {
    const code = target.charCodeAt(i)
    if (isSlash(code) || code === QUESTION_MARK || code === HASH) break
    i++
  }
  return i
}

/** RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` before `end`. */
function isScheme(s: string, end: number): boolean {
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i)
    const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
    if (i === 0 ? !letter : !(letter || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46))
      return false
  }
  return true
}

function isSlash(code: number): boolean {
  return code === SLASH || code === BACKSLASH
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
