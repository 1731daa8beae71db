/** What every README example must do once it serves: limit, and say so the standard way. */
import { request } from 'node:http'

export type Answer = { status: number; header: (name: string) => string | undefined; body: string }

/** GET / from a chosen local address (the client IP the app sees; any 127/8 address works). */
export function get(port: number, localAddress = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', localAddress }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => {
        const header = (name: string) => {
          const value = res.headers[name.toLowerCase()]
          return Array.isArray(value) ? value.join(', ') : value
        }
        resolve({ status: res.statusCode ?? 0, header, body })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** A loopback address no other run uses, so a shared store (Redis) starts with a fresh key. */
export function freshLoopbackAddress(): string {
  const byte = () => 1 + Math.floor(Math.random() * 254)
  return `127.${byte()}.${byte()}.${byte()}`
}

const MAX_REQUESTS = 100

/**
 * Sends requests until one is denied: the first must be admitted and carry the rate-limit
 * fields, a denial must come within MAX_REQUESTS and be a 429 with `Retry-After` and an
 * RFC 9457 problem body.
 */
export async function expectRateLimited(send: () => Promise<Answer>): Promise<string> {
  const first = await send()
  if (first.status === 429) throw new Error('the first request was denied')
  if (first.status >= 500)
    throw new Error(`the first request failed: ${first.status} ${first.body}`)
  const fields = ['ratelimit', 'ratelimit-policy', 'x-ratelimit-limit']
  if (!fields.some((name) => first.header(name) !== undefined)) {
    throw new Error(`the first answer has none of ${fields.join(', ')}`)
  }
  for (let sent = 2; sent <= MAX_REQUESTS; sent++) {
    const answer = await send()
    if (answer.status >= 500) throw new Error(`request ${sent} failed: ${answer.status}`)
    if (answer.status !== 429) continue
    const retryAfter = Number(answer.header('retry-after'))
    if (!(retryAfter >= 1))
      throw new Error(`429 without a Retry-After: ${answer.header('retry-after')}`)
    const type = answer.header('content-type') ?? ''
    if (!type.startsWith('application/problem+json')) throw new Error(`429 as ${type}`)
    const problem = JSON.parse(answer.body) as { status?: number }
    if (problem.status !== 429) throw new Error(`429 with the problem body ${answer.body}`)
    return `denied request ${sent} with 429, Retry-After ${retryAfter}`
  }
  throw new Error(`${MAX_REQUESTS} requests and none denied`)
}
