import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createResponder } from '../response/responder.js'
import { decision, sent, verdict } from '../response/test-fixtures.js'
import { createPartitionKeyHasher } from './partition-key.js'

/** What a client computes: Node's SHA-256 of the key's UTF-8 bytes, the first 12 in base64. */
const expected = (key: string) =>
  `:${createHash('sha256').update(key, 'utf8').digest().subarray(0, 12).toString('base64')}:`

/** Any UTF-16 text: lone surrogates, pairs, and characters of one to three UTF-8 bytes. */
const anyText = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  ),
  maxLength: 200,
})

describe('partition key hasher', () => {
  it('gives the value a client computes with SHA-256, for any text', () => {
    const pk = createPartitionKeyHasher()
    fc.assert(
      fc.property(anyText, (key) => {
        expect(pk(key)).toBe(expected(key))
      }),
      { numRuns: 2000 },
    )
  })

  it('gives it key after key, repeated, as a fresh hasher does', () => {
    fc.assert(
      fc.property(fc.array(anyText, { maxLength: 20 }), (keys) => {
        const pk = createPartitionKeyHasher()
        // Each key twice in a row: the second answer comes from the last value kept.
        for (const key of keys.flatMap((k) => [k, k])) expect(pk(key)).toBe(expected(key))
      }),
      { numRuns: 200 },
    )
  })

  it('is what the responder puts on each rule, from the rule’s own key', () => {
    const two = verdict([
      decision('api', { key: 'api_key:k_1' }),
      decision('ip', { key: 'ip:203.0.113.7' }),
    ])
    const fields = sent(createResponder({ partitionKey: true }).respond(two, 0).headers)
    expect(fields.RateLimit).toBe(
      `"api";r=99;t=60;pk=${expected('api_key:k_1')}, "ip";r=99;t=60;pk=${expected('ip:203.0.113.7')}`,
    )
    expect(fields['RateLimit-Policy']).toBe(
      `"api";q=100;w=60;pk=${expected('api_key:k_1')}, "ip";q=100;w=60;pk=${expected('ip:203.0.113.7')}`,
    )
  })

  it.each([null, '', {}])(
    'adds no pk where the partitionKey function gives %j, which every client would share',
    (given) => {
      const responder = createResponder({
        partitionKey: (d) => (d.rule === 'api' ? (given as string) : 'tenant-7'),
      })
      const two = verdict([decision('api'), decision('ip')])
      const fields = sent(responder.respond(two, 0).headers)
      expect(fields.RateLimit).toBe(`"api";r=99;t=60, "ip";r=99;t=60;pk=${expected('tenant-7')}`)
    },
  )

  it('hashes a number as its text', () => {
    const responder = createResponder({ partitionKey: () => 42 as unknown as string })
    const fields = sent(responder.respond(verdict([decision('api')]), 0).headers)
    expect(fields.RateLimit).toContain(`pk=${expected('42')}`)
  })
})
