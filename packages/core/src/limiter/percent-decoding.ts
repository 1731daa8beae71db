/**
 * Percent-decoding for matching paths, as the frameworks' routers see them. Express and
 * koa-router route on the raw path and decode each parameter with `decodeURIComponent`; Hono
 * routes on the path after `decodeURI` and decodes parameters again. So a handler on
 * `POST /v1/:resource` sees `labels:batch` for `/v1/labels%3Abatch`, `/v1/labels%3abatch` and
 * `/v1/%6cabels:batch` alike, and a rule on `POST /v1/labels:batch` must match all three.
 *
 * Every escape is decoded (RFC 3986 §6.2.2.2 decodes only unreserved characters; the routers
 * decode all of them), except two, which stay escaped so that the segments do not change:
 * - `%2F` stays in its segment: no router splits a path on an encoded slash, so
 *   `/v1/labels%2Fbatch` is one `:resource` (`labels/batch` to the handler), never
 *   `/v1/labels/batch`.
 * - `%25` stays `%25`, so that its decoded `%` cannot start a new escape (`%2541` is the text
 *   `%41`, not `A`); a `%` that starts no escape is written `%25` too.
 * A run of escapes that is not UTF-8 stays as it is, as Hono and koa-router leave it (Express
 * answers 400). Dot segments are kept: the routers route `..` as a segment like any other.
 */

const PERCENT = 37

/** `path` with its escapes decoded, except `%2F` and `%25`, and hex digits in lower case. */
export function decodePercents(path: string): string {
  const first = path.indexOf('%')
  if (first === -1) return path
  let out = path.slice(0, first)
  let i = first
  while (i < path.length) {
    if (path.charCodeAt(i) !== PERCENT) {
      const next = path.indexOf('%', i)
      const end = next === -1 ? path.length : next
      out += path.slice(i, end)
      i = end
      continue
    }
    if (!isEscape(path, i)) {
      out += '%25'
      i++
      continue
    }
    let end = i
    while (end < path.length && path.charCodeAt(end) === PERCENT && isEscape(path, end)) end += 3
    out += decodeRun(path.slice(i, end))
    i = end
  }
  return out
}

/** A run of escapes (`%C3%A9%3A`), decoded around the `%2F` and `%25` kept in it. */
function decodeRun(run: string): string {
  let out = ''
  let start = 0
  for (let i = 0; i < run.length; i += 3) {
    const byte = run.slice(i + 1, i + 3).toLowerCase()
    if (byte !== '2f' && byte !== '25') continue
    out += `${decodeUtf8(run.slice(start, i))}%${byte}`
    start = i + 3
  }
  return out + decodeUtf8(run.slice(start))
}

function decodeUtf8(escapes: string): string {
  if (escapes === '') return ''
  try {
    return decodeURIComponent(escapes)
  } catch {
    return escapes.toLowerCase()
  }
}

function isEscape(text: string, at: number): boolean {
  return isHex(text.charCodeAt(at + 1)) && isHex(text.charCodeAt(at + 2))
}

function isHex(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102)
}
