/** Methods a route or `match.method` may name. */
export const HTTP_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'CONNECT',
  'QUERY',
]

/** One path segment: a literal (as written) or a `:param` (any non-empty segment). */
export type RouteSegment = { readonly literal: string } | { readonly param: string }

/**
 * A route such as `POST /v1/labels:batch`, `/v1/orders/:id` or `GET /v1/*`, parsed. A segment
 * that starts with `:` is a parameter (`labels:batch` is a literal, and so is Express's escaped
 * `labels\\:batch`; `\\:id` is the literal `:id`); a final `*` matches the rest of the path,
 * including nothing.
 */
export type ParsedRoute = {
  /** Upper-case method, or undefined for any method. */
  readonly method: string | undefined
  readonly segments: readonly RouteSegment[]
  /** True when the route ends in `*`. */
  readonly rest: boolean
  /** The route written back in normal form: `METHOD /path` or `/path`, no trailing slash. */
  readonly text: string
}

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const FORBIDDEN_IN_PATH = /[\s?#]/

/**
 * How routes are read while rules are validated: `parseRoute`, or for a lean limiter without
 * route matching one that refuses every route (its problem is reported as a bad route's).
 */
export type RouteParser = (route: unknown) => ParsedRoute | string

/** Parses a route, or returns what is wrong with it. */
export function parseRoute(route: unknown): ParsedRoute | string {
  if (typeof route !== 'string') return `expected a route string, got ${typeof route}`
  const parts = route.trim().split(/\s+/)
  if (parts.length > 2 || parts[0] === '') {
    return `expected "METHOD /path" or "/path", got ${JSON.stringify(route)}`
  }
  const path = parts.length === 2 ? parts[1]! : parts[0]!
  let method: string | undefined
  if (parts.length === 2) {
    method = parts[0]!.toUpperCase()
    if (!HTTP_METHODS.includes(method)) {
      return `unknown method ${JSON.stringify(parts[0])} in ${JSON.stringify(route)} (known: ${HTTP_METHODS.join(', ')})`
    }
  }
  const problem = (reason: string) => `${reason} in route ${JSON.stringify(route)}`
  if (path === '*') return { method, segments: [], rest: true, text: join(method, '/*') }
  if (!path.startsWith('/')) return problem('the path must start with "/"')
  if (FORBIDDEN_IN_PATH.test(path)) return problem('no query string, fragment or spaces allowed')
  const raw = path.replace(/\/+$/, '').split('/').slice(1)
  const segments: RouteSegment[] = []
  let rest = false
  for (let i = 0; i < raw.length; i++) {
    const segment = raw[i]!
    if (segment === '*') {
      if (i !== raw.length - 1) return problem('"*" is only allowed as the last segment')
      rest = true
    } else if (segment.includes('*')) {
      return problem('"*" must be a whole last segment, e.g. /v1/*')
    } else if (segment === '') {
      return problem('empty segment ("//")')
    } else if (segment.startsWith(':')) {
      if (!PARAM_NAME.test(segment.slice(1))) {
        return problem(`bad parameter ${JSON.stringify(segment)} (expected :name)`)
      }
      segments.push({ param: segment.slice(1) })
    } else {
      const literal = unescapeColons(segment)
      if (literal === undefined) return problem(BACKSLASH_PROBLEM)
      segments.push({ literal })
      // Written back in the form that parses to the same literal.
      raw[i] = literal.startsWith(':') ? `\\${literal}` : literal
    }
  }
  const normal = `/${raw.join('/')}`
  return { method, segments, rest, text: join(method, normal) }
}

const BACKSLASH_PROBLEM =
  'a backslash matches nothing (request paths read "\\" as "/"); only "\\:" is understood, as in Express, for a literal ":"'

/**
 * A literal segment as Express writes it: `labels\\:batch` (a `\\:` escapes the colon that
 * would start a parameter there) is `labels:batch`, which is already a literal here, since only
 * a segment that starts with `:` is a parameter. Undefined when any other backslash is left.
 */
function unescapeColons(segment: string): string | undefined {
  if (!segment.includes('\\')) return segment
  const literal = segment.replaceAll('\\:', ':')
  return literal.includes('\\') ? undefined : literal
}

function join(method: string | undefined, path: string): string {
  return method === undefined ? path : `${method} ${path}`
}
