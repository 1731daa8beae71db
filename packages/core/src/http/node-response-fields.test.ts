import { describe, expect, it } from 'vitest'
import { setNodeResponseFields } from './node-response-fields.js'

/** A Node-like response that records its fields as Node does: lower-case keys, lines in order. */
function recordingResponse(initial: Record<string, string> = {}) {
  const fields = new Map<string, { name: string; values: string[] }>()
  for (const [name, value] of Object.entries(initial)) {
    fields.set(name.toLowerCase(), { name, values: [value] })
  }
  return {
    fields,
    getHeaderNames: () => [...fields.keys()],
    setHeader(name: string, value: string) {
      fields.set(name.toLowerCase(), { name, values: [value] })
    },
    appendHeader(name: string, value: string) {
      const field = fields.get(name.toLowerCase())
      if (field === undefined) fields.set(name.toLowerCase(), { name, values: [value] })
      else field.values.push(value)
    },
  }
}

describe('setNodeResponseFields', () => {
  it('sets new fields, appends to ones already set, and replaces Content-Type', () => {
    const res = recordingResponse({ 'X-Powered-By': 'Express', RateLimit: '"upstream";r=5;t=9' })
    res.setHeader('Content-Type', 'text/plain')
    setNodeResponseFields(res, [
      ['RateLimit', '"per-ip";r=1;t=1'],
      ['Retry-After', '1'],
      ['Content-Type', 'application/problem+json'],
    ])
    expect(res.fields.get('ratelimit')?.values).toEqual(['"upstream";r=5;t=9', '"per-ip";r=1;t=1'])
    expect(res.fields.get('retry-after')?.values).toEqual(['1'])
    expect(res.fields.get('content-type')?.values).toEqual(['application/problem+json'])
    expect(res.fields.get('x-powered-by')?.values).toEqual(['Express'])
  })
})
