import type { GatewayHandle } from './gateways.js'
import type { SimRequest } from './scenarios.js'

/** One request and what the gateway answered. */
export type Exchange = {
  /** Simulated time, ms since the epoch. */
  readonly at: number
  readonly gateway: string
  readonly request: SimRequest
  readonly status: number
  readonly remaining: string | undefined
  readonly retryAfter: string | undefined
  readonly rateLimit: string | undefined
  readonly policy: string | undefined
  readonly body: string
}

/**
 * Sends `request` as the load balancer would pass it on: from loopback, with the client's real
 * address appended to whatever `X-Forwarded-For` the client sent.
 */
export async function send(
  gateway: GatewayHandle,
  request: SimRequest,
  at: number,
): Promise<Exchange> {
  const forwarded =
    request.spoofed === undefined ? request.clientIp : `${request.spoofed}, ${request.clientIp}`
  const headers: Record<string, string> = { 'x-forwarded-for': forwarded }
  if (request.apiKey !== undefined) headers['x-api-key'] = request.apiKey
  const response = await fetch(`${gateway.url}${request.path}`, {
    method: request.method,
    headers,
  })
  const read = (name: string) => response.headers.get(name) ?? undefined
  return {
    at,
    gateway: gateway.name,
    request,
    status: response.status,
    remaining: read('x-ratelimit-remaining'),
    retryAfter: read('retry-after'),
    rateLimit: read('ratelimit'),
    policy: read('ratelimit-policy'),
    body: await response.text(),
  }
}
