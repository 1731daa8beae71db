import fc from 'fast-check'
import type { Context } from 'hono'
import { describe, expect, it } from 'vitest'
import { hono } from './request.js'

/** The runtime address lookup before it read `c.env` by optional chaining (differential copy). */
function defaultAddressBefore(c: Context): string | undefined {
  // biome-ignore lint/suspicious/noExplicitAny: a copy of the old code, typed loosely.
  const env = c.env as any
  if (env !== undefined && env !== null) {
    const incoming = env.incoming ?? env.server?.incoming
    if (incoming !== undefined) return incoming.socket?.remoteAddress
    if (typeof env.requestIP === 'function') return env.requestIP(c.req.raw)?.address
    if (env.remoteAddr !== undefined) return env.remoteAddr.hostname
  }
  const raw = c.req.raw as Request & { readonly cf?: unknown }
  return raw.cf === undefined ? undefined : (c.req.header('cf-connecting-ip') ?? undefined)
}

/** What a lookup gives, or the kind of error it throws (both throw on a null `remoteAddr`). */
function outcome(lookup: () => string | undefined): { address?: string; threw?: string } {
  try {
    return { address: lookup() }
  } catch (error) {
    return { threw: (error as Error).constructor.name }
  }
}

const address = fc.option(fc.constantFrom('203.0.113.7', '::1', ''), { nil: undefined })
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(arb, fc.constant(undefined), fc.constant(null as unknown as T))
const incoming = maybe(fc.record({ socket: maybe(fc.record({ remoteAddress: address })) }))
const env = maybe(
  fc.record(
    {
      incoming,
      server: maybe(fc.record({ incoming })),
      requestIP: fc.oneof(
        fc.constant(undefined),
        fc.constant('not a function'),
        address.map((a) => () => (a === undefined ? null : { address: a })),
      ),
      remoteAddr: maybe(fc.record({ hostname: address })),
    },
    { requiredKeys: [] },
  ),
)

describe('hono: the runtime address lookup', () => {
  it('finds what the lookup before optional chaining found, on any c.env and request', () => {
    const socketAddress = hono(undefined).socketAddress
    fc.assert(
      fc.property(env, fc.boolean(), address, (bindings, cf, connectingIp) => {
        const raw = new Request('http://localhost/', {
          headers: connectingIp === undefined ? {} : { 'cf-connecting-ip': connectingIp },
        }) as Request & { cf?: unknown }
        if (cf) raw.cf = {}
        const c = {
          env: bindings,
          req: { raw, header: (name: string) => raw.headers.get(name) ?? undefined },
        } as unknown as Context
        expect(outcome(() => socketAddress(c))).toEqual(outcome(() => defaultAddressBefore(c)))
      }),
    )
  })
})
