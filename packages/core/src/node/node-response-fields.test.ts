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
    getHeader: (name: string) => fields.get(name.toLowerCase())?.values,
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

describe('setNodeResponseFields after another limiter', () => {
  it('keeps one value of each single-valued field: the more restrictive rule', () => {
    const res = recordingResponse({ 'X-Powered-By': 'Express' })
    setNodeResponseFields(res, [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '99'],
      ['X-RateLimit-Reset', '1767225660'],
      ['RateLimit', '"global";r=99;t=1'],
    ])
    setNodeResponseFields(res, [
      ['X-RateLimit-Limit', '5'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '1767225900'],
      ['RateLimit', '"login";r=0;t=240'],
      ['Retry-After', '240'],
    ])
    expect(res.fields.get('x-ratelimit-limit')?.values).toEqual(['5'])
    expect(res.fields.get('x-ratelimit-remaining')?.values).toEqual(['0'])
    expect(res.fields.get('x-ratelimit-reset')?.values).toEqual(['1767225900'])
    expect(res.fields.get('ratelimit')?.values).toEqual(['"global";r=99;t=1', '"login";r=0;t=240'])
    expect(res.fields.get('retry-after')?.values).toEqual(['240'])
  })
})

describe('fields the response already has, named in any case', () => {
  it('appends to a field whatever the case it was set in, and sets one it lacks', () => {
    const res = recordingResponse({ ratelimit: '"upstream";r=5;t=9', 'X-POWERED-BY': 'Express' })
    setNodeResponseFields(res, [
      ['RateLimit', '"per-ip";r=1;t=1'],
      ['X-Custom', 'a'],
    ])
    // Asked again (the lower-case form now remembered), the answers are the same.
    setNodeResponseFields(res, [
      ['RateLimit', '"per-ip";r=0;t=1'],
      ['X-Custom', 'b'],
    ])
    expect(res.fields.get('ratelimit')?.values).toEqual([
      '"upstream";r=5;t=9',
      '"per-ip";r=1;t=1',
      '"per-ip";r=0;t=1',
    ])
    expect(res.fields.get('x-custom')?.values).toEqual(['a', 'b'])
  })

  it('sets every field on a response with none', () => {
    const res = recordingResponse()
    setNodeResponseFields(res, [['RateLimit', '"per-ip";r=1;t=1']])
    expect(res.fields.get('ratelimit')).toEqual({ name: 'RateLimit', values: ['"per-ip";r=1;t=1'] })
  })
})
