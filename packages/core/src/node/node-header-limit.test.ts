import { describe, expect, it } from 'vitest'
import { compileClientIp } from '../identity/client-ip.js'
import {
  apiKeyIdentity,
  compileIdentities,
  createIdentityResolver,
} from '../identity/identities.js'
import { trustedProxies } from '../identity/proxy-trust.js'
import { headerListMayBeCut } from './node-header-limit.js'

/** A request shape with `lines` header lines, on a server with `maxHeadersCount`. */
const request = (lines: number, maxHeadersCount?: number | null) => ({
  rawHeaders: Array.from({ length: lines * 2 }, (_, i) => (i % 2 === 0 ? `x-f${i}` : 'a')),
  socket: { server: { maxHeadersCount } },
})

describe('headerListMayBeCut', () => {
  it("is true once the list reaches the server's maxHeadersCount (1000 when unset)", () => {
    expect(headerListMayBeCut(request(999))).toBe(false)
    expect(headerListMayBeCut(request(1000))).toBe(true)
    expect(headerListMayBeCut(request(1023, null))).toBe(true)
    expect(headerListMayBeCut(request(49, 50))).toBe(false)
    expect(headerListMayBeCut(request(50, 50))).toBe(true)
  })

  it('is never true when the server sets no limit (0), or outside a server', () => {
    expect(headerListMayBeCut(request(5000, 0))).toBe(false)
    expect(headerListMayBeCut({ rawHeaders: [] })).toBe(false)
    expect(headerListMayBeCut({ rawHeaders: new Array(2000).fill('a'), socket: null })).toBe(true)
  })
})

describe('identities of a request whose header list may have been cut', () => {
  const warnings: string[] = []
  // What a client sends before the filler: the proxy's own line came after and was dropped.
  const headers: Record<string, string> = { 'x-forwarded-for': '6.6.6.6', 'x-api-key': 'k_1' }
  // The Node request each is read from: one whose list reached the server's limit, or a short one.
  type Request = { readonly headers: Record<string, string>; readonly cut: boolean }
  const incoming = (r: Request) => (r.cut ? request(50, 50) : request(49, 50))
  const options = {
    trustProxy: 'loopback',
    logger: { warn: (message: string) => warnings.push(message) },
  } as const
  const read = (request: Request, name: string) => request.headers[name]
  const resolve = compileIdentities<Request>(
    read,
    compileClientIp(options, trustedProxies),
    apiKeyIdentity(options, read, true),
    incoming,
  )
  const identities = (cut: boolean) => resolve({ headers, cut }, '127.0.0.1', undefined)

  it('trusts no forwarding header: the client is keyed as if it sent none', () => {
    expect(identities(false).ip).toBe('6.6.6.6')
    expect(identities(true)).toEqual({ ip: '127.0.0.1', api_key: 'k_1', user: undefined })
  })

  it('asks for the Node request only while a proxy is trusted', () => {
    let asked = 0
    const direct = compileIdentities<Request>(
      (request, name) => request.headers[name],
      compileClientIp({ logger: false }, trustedProxies),
      undefined,
      (r) => (++asked, incoming(r)),
    )
    expect(direct({ headers, cut: true }, '127.0.0.1', undefined).ip).toBe('127.0.0.1')
    expect(asked).toBe(0)
  })

  it('warns once, with a code', () => {
    identities(true)
    identities(true)
    const truncated = warnings.filter((w) => w.includes('WARN_HEADERS_TRUNCATED'))
    expect(truncated).toHaveLength(1)
    expect(truncated[0]).toMatch(/^\[tollgate\] WARN_HEADERS_TRUNCATED: .*maxHeadersCount/)
  })

  it("reads an identity source's headersCut as a cut list", () => {
    const resolver = createIdentityResolver({ trustProxy: 'loopback', logger: false })
    const source = (headersCut?: boolean) => ({
      socketAddress: '127.0.0.1',
      header: (name: string) => headers[name],
      headersCut,
    })
    expect(resolver.identities(source(true)).ip).toBe('127.0.0.1')
    expect(resolver.identities(source(false)).ip).toBe('6.6.6.6')
    expect(resolver.identities(source()).ip).toBe('6.6.6.6')
  })

  it('reads the next request whole again', () => {
    expect(identities(true).ip).toBe('127.0.0.1')
    expect(identities(false).ip).toBe('6.6.6.6')
  })
})
