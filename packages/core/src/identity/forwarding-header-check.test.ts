import { describe, expect, it } from 'vitest'
import { forwardingHeaderCheck } from './forwarding-header-check.js'

/** A check, the warnings it gave and the header reads it made. */
function setup() {
  let warnings = 0
  let reads = 0
  const check = forwardingHeaderCheck(() => warnings++)
  const request = (forwarded: boolean) => {
    check((name) => {
      reads++
      return forwarded && name === 'x-forwarded-for' ? '198.51.100.1' : undefined
    })
  }
  return { request, reads: () => reads, warnings: () => warnings }
}

describe('the forwarding header check', () => {
  it('looks at every one of the first 1,024 requests, then one in 64', () => {
    const { request, reads } = setup()
    for (let i = 0; i < 1024; i++) request(false)
    expect(reads()).toBe(2048)
    for (let i = 0; i < 64 * 100; i++) request(false)
    expect(reads()).toBe(2048 + 2 * 100)
  })

  it('warns once, on the first request looked at that carries the header', () => {
    const { request, warnings } = setup()
    request(false)
    expect(warnings()).toBe(0)
    request(true)
    request(true)
    expect(warnings()).toBe(1)
  })

  it('finds a header that starts late within 64 requests, and then reads no more', () => {
    const { request, reads, warnings } = setup()
    for (let i = 0; i < 5000; i++) request(false)
    let sent = 0
    while (warnings() === 0) {
      request(true)
      sent++
    }
    expect(sent).toBeLessThanOrEqual(64)
    const before = reads()
    for (let i = 0; i < 1000; i++) request(true)
    expect(reads()).toBe(before)
    expect(warnings()).toBe(1)
  })
})
