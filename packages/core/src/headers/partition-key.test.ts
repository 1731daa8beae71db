import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { nodeSha256 } from '../node/sha256.js'
import { createResponder } from '../response/responder.js'
import { decision, sent, verdict } from '../response/test-fixtures.js'
import { createPartitionKeyHasher } from './partition-key.js'

const expected = (key: string) =>
  `:${createHash('sha256').update(key).digest().subarray(0, 12).toString('base64')}:`

describe('partition key hasher', () => {
  it('waits for Web Crypto the first time, then answers synchronously with the same value', async () => {
    const pk = createPartitionKeyHasher()
    const first = pk('api_key:k_1')
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toBe(expected('api_key:k_1'))
    expect(pk('api_key:k_1')).toBe(expected('api_key:k_1'))
    expect(await pk('ip:2001:db8::/64 ✓')).toBe(expected('ip:2001:db8::/64 ✓'))
  })

  it('keeps two generations: a key in use survives a turnover, one unused for two is hashed again', async () => {
    const pk = createPartitionKeyHasher(2)
    await pk('a')
    await pk('b')
    await pk('c') // {a, b} become the older generation
    expect(pk('a')).toBe(expected('a')) // found there, moved back: recent is {c, a}
    await pk('d') // {c, a} become the older generation; b is gone
    expect(pk('c')).toBe(expected('c'))
    expect(pk('a')).toBe(expected('a'))
    const again = pk('b')
    expect(again).toBeInstanceOf(Promise)
    expect(await again).toBe(expected('b'))
  })
})

describe('partition key hasher with the runtime’s synchronous SHA-256', () => {
  it('answers at once, with the value Web Crypto gives, for any text (lone surrogates too)', async () => {
    expect(nodeSha256).toBeDefined()
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (key) => {
        const viaWebCrypto = await createPartitionKeyHasher()(key)
        const viaNode = createPartitionKeyHasher(undefined, nodeSha256)(key)
        expect(viaNode).toBe(viaWebCrypto)
      }),
      { numRuns: 300 },
    )
  })

  it('gives the same value through base64 as through the bytes, key after key and repeated', () => {
    expect(nodeSha256?.base64).toBeDefined()
    const bytesOnly = (text: string) => nodeSha256!(text)
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 60 }), { maxLength: 20 }),
        (keys) => {
          const viaBase64 = createPartitionKeyHasher(undefined, nodeSha256)
          const viaBytes = createPartitionKeyHasher(undefined, bytesOnly)
          // Each key twice in a row: the second answer comes from the last value kept.
          for (const key of keys.flatMap((k) => [k, k])) {
            expect(viaBase64(key)).toBe(expected(key))
            expect(viaBytes(key)).toBe(expected(key))
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it('is what the responder uses when given one: every response is synchronous', () => {
    const responder = createResponder({ partitionKey: true }, { sha256: nodeSha256 })
    const built = responder.respondWithKeys(verdict([decision('ip', { key: 'ip:192.0.2.9' })]), 0)
    expect(built).not.toBeInstanceOf(Promise)
    expect(sent((built as Exclude<typeof built, Promise<unknown>>).headers).RateLimit).toBe(
      `"ip";r=99;t=60;pk=${expected('ip:192.0.2.9')}`,
    )
  })
})

describe('respondWithKeys', () => {
  const two = verdict([
    decision('api', { key: 'api_key:k_1' }),
    decision('ip', { key: 'ip:203.0.113.7' }),
  ])

  it('is synchronous once every listed key was hashed, with the same fields', async () => {
    const responder = createResponder({ partitionKey: true })
    const first = responder.respondWithKeys(two, 0)
    expect(first).toBeInstanceOf(Promise)
    const built = await first
    const again = responder.respondWithKeys(two, 0)
    expect(again).not.toBeInstanceOf(Promise)
    expect(built.headers).toEqual((again as typeof built).headers)
    expect(sent(built.headers).RateLimit).toBe(
      `"api";r=99;t=60;pk=${expected('api_key:k_1')}, "ip";r=99;t=60;pk=${expected('ip:203.0.113.7')}`,
    )
  })

  it('waits when one key of several is new, and puts each key on its own rule', async () => {
    const responder = createResponder({ partitionKey: true })
    await responder.respondWithKeys(verdict([decision('ip', { key: 'ip:203.0.113.7' })]), 0)
    const mixed = responder.respondWithKeys(two, 0)
    expect(mixed).toBeInstanceOf(Promise)
    expect(sent((await mixed).headers)['RateLimit-Policy']).toBe(
      `"api";q=100;w=60;pk=${expected('api_key:k_1')}, "ip";q=100;w=60;pk=${expected('ip:203.0.113.7')}`,
    )
  })

  it.each([null, '', {}])(
    'adds no pk where the partitionKey function gives %j, which every client would share',
    async (given) => {
      const responder = createResponder({
        partitionKey: (d) => (d.rule === 'api' ? (given as string) : 'tenant-7'),
      })
      const fields = sent((await responder.respondWithKeys(two, 0)).headers)
      expect(fields['RateLimit']).toBe(`"api";r=99;t=60, "ip";r=99;t=60;pk=${expected('tenant-7')}`)
    },
  )

  it('hashes a number as its text', async () => {
    const responder = createResponder({ partitionKey: () => 42 as unknown as string })
    const fields = sent((await responder.respondWithKeys(two, 0)).headers)
    expect(fields['RateLimit']).toContain(`pk=${expected('42')}`)
  })

  it('refuses a cache size that would never rotate', () => {
    expect(() => createPartitionKeyHasher(Number.NaN)).toThrow(/cache size/)
    expect(() => createPartitionKeyHasher(0)).toThrow(/cache size/)
  })
})
