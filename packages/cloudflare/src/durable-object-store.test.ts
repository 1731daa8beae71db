import { createLimiter, type RuleConfig, tokenBucket } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import {
  durableObjectStore,
  type LimiterNamespace,
  type LimiterStub,
} from './durable-object-store.js'

/** A namespace whose every object answers with `stub`. */
const namespaceOf = (stub: LimiterStub): LimiterNamespace<string> => ({
  idFromName: (name) => name,
  get: () => stub,
})

const unreachable = namespaceOf({
  fetch: () => Promise.reject(new Error('Durable Object reset because its code was updated')),
})
const failing = namespaceOf({
  fetch: async () => new Response('internal error', { status: 500 }),
})
const foreign = namespaceOf({ fetch: async () => Response.json({ hello: 'world' }) })

const charge: Charge = {
  rule: 'per-ip',
  algorithm: tokenBucket({ rate: 1, burst: 5 }),
  key: 'ip:203.0.113.7',
  cost: 1,
  shadow: false,
}

const rule = (onStoreError: 'open' | 'closed'): RuleConfig => ({
  id: 'per-ip',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  burst: 5,
  onStoreError,
})

describe('durableObjectStore when its object fails', () => {
  it('reports an object it cannot reach, or that answers an error, as the store unavailable', async () => {
    for (const namespace of [unreachable, failing]) {
      const store = durableObjectStore(namespace, { time: 'caller' })
      await expect(store.consume([charge], 0)).rejects.toMatchObject({
        code: 'ERR_RL_STORE_UNAVAILABLE',
      })
      await expect(store.refund([charge], 0, 0)).rejects.toMatchObject({
        code: 'ERR_RL_STORE_UNAVAILABLE',
      })
    }
  })

  it('reports an answer that is not decisions as a bad reply, naming the class to bind', async () => {
    const store = durableObjectStore(foreign)
    await expect(store.consume([charge], 0)).rejects.toMatchObject({
      code: 'ERR_RL_STORE_REPLY',
      message: expect.stringContaining('TollgateLimiter'),
    })
  })

  it('lets each rule’s failure policy decide: open admits, closed refuses, never an error', async () => {
    const facts = { method: 'GET', path: '/', identities: { ip: '203.0.113.7' } }
    const decide = (onStoreError: 'open' | 'closed') =>
      createLimiter({
        rules: [rule(onStoreError)],
        store: durableObjectStore(unreachable),
        onError: () => {},
      }).decide(facts, { now: 0 })
    expect(await decide('open')).toMatchObject({ allowed: true })
    expect(await decide('closed')).toMatchObject({ allowed: false, reason: 'store-unavailable' })
  })
})

describe('durableObjectStore options', () => {
  it('refuses a binding that is not a namespace, and bad options, naming the option', () => {
    expect(() => durableObjectStore(undefined as never)).toThrow(/durableObjectStore\(\) namespace/)
    expect(() => durableObjectStore(unreachable, { time: 'server' as never })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'time' }),
    )
    expect(() => durableObjectStore(unreachable, { prefix: 7 as never })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'prefix' }),
    )
    expect(() => durableObjectStore(unreachable, { perfix: 'a' } as never)).toThrow(/prefix/)
  })
})

describe('durableObjectStore with nothing to decide', () => {
  it('answers a request of no charges without asking any object', async () => {
    const store = durableObjectStore(unreachable, { time: 'caller' })
    expect(await store.consume([], 5_000)).toEqual({ decisions: [], at: 5_000 })
  })
})
