import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import type { HeaderAccessor } from '../headers/types.js'
import { type ClientIpOptions, compileClientIp, createClientIpResolver } from './client-ip.js'
import { type ProxyTrust, trustedProxies } from './proxy-trust.js'

function headers(values: Record<string, string | string[]>): HeaderAccessor {
  return (name) => values[name]
}

const readRecord = (values: Record<string, string>, name: string) => values[name]

function recorder() {
  const messages: string[] = []
  return { messages, logger: { warn: (message: string) => messages.push(message) } }
}

function resolve(
  options: ClientIpOptions,
  socket: string | undefined,
  values: Record<string, string | string[]> = {},
) {
  return createClientIpResolver({ logger: false, ...options })(socket, headers(values))
}

const PROXY = '10.0.0.5'

describe('trustProxy: false (the default)', () => {
  it('keys on the socket peer and ignores forwarding headers', () => {
    const client = resolve({}, '203.0.113.7', { 'x-forwarded-for': '198.51.100.1' })
    expect(client).toEqual({ ip: '203.0.113.7', key: '203.0.113.7', hops: 0 })
  })

  it('keys an IPv4-mapped socket address as IPv4', () => {
    expect(resolve({}, '::ffff:203.0.113.7')?.key).toBe('203.0.113.7')
  })

  it('keys an IPv6 socket address by its /64, or by ipv6Prefix', () => {
    expect(resolve({}, '2001:db8:1:2:3:4:5:6')).toEqual({
      ip: '2001:db8:1:2:3:4:5:6',
      key: '2001:db8:1:2::/64',
      hops: 0,
    })
    expect(resolve({ ipv6Prefix: 56 }, '2001:db8:1:2ff::1')?.key).toBe('2001:db8:1:200::/56')
  })

  it('has no client for a socket address that is not an IP (a Unix socket)', () => {
    expect(resolve({}, undefined)).toBeUndefined()
    expect(resolve({}, '/var/run/app.sock')).toBeUndefined()
  })
})

describe('trustProxy as a list: X-Forwarded-For walked right to left', () => {
  const options = { trustProxy: ['10.0.0.0/8'] }

  it('takes the first untrusted address from the right', () => {
    const client = resolve(options, PROXY, { 'x-forwarded-for': '203.0.113.7, 10.0.0.9' })
    expect(client).toEqual({ ip: '203.0.113.7', key: '203.0.113.7', hops: 2 })
  })

  it('a client that sends its own X-Forwarded-For through the proxy cannot pick its key', () => {
    // The client sent "X-Forwarded-For: 1.2.3.4"; the trusted proxy appended what it saw.
    const client = resolve(options, PROXY, { 'x-forwarded-for': '1.2.3.4, 203.0.113.7' })
    expect(client?.key).toBe('203.0.113.7')
  })

  it('a client that forges a trusted-looking chain still gets its real address', () => {
    const client = resolve(options, PROXY, { 'x-forwarded-for': '1.2.3.4, 10.0.0.1, 203.0.113.7' })
    expect(client?.key).toBe('203.0.113.7')
  })

  it('a client that forges the headers without going through a trusted proxy is keyed on its socket', () => {
    const client = resolve(options, '198.51.100.66', { 'x-forwarded-for': '10.0.0.1, 1.2.3.4' })
    expect(client).toEqual({ ip: '198.51.100.66', key: '198.51.100.66', hops: 0 })
  })

  it('reads several X-Forwarded-For lines in order', () => {
    const client = resolve(options, PROXY, {
      'x-forwarded-for': ['1.2.3.4', '203.0.113.7, 10.0.0.9'],
    })
    expect(client?.key).toBe('203.0.113.7')
  })

  it('stops at an entry that is not an address: the proxy that wrote it is the key, never a forged one', () => {
    const client = resolve(options, PROXY, { 'x-forwarded-for': '1.2.3.4, garbage' })
    expect(client).toEqual({ ip: PROXY, key: PROXY, hops: 0 })
    expect(resolve(options, PROXY, { 'x-forwarded-for': '1.2.3.4,,10.0.0.9' })?.key).toBe(
      '10.0.0.9',
    )
  })

  it('stops at a trailing empty entry, which a trusted proxy wrote after the client entries', () => {
    // Node joins the client's "9.9.9.9" and the proxy's empty line as "9.9.9.9, ".
    expect(resolve(options, PROXY, { 'x-forwarded-for': '9.9.9.9, ' })).toEqual({
      ip: PROXY,
      key: PROXY,
      hops: 0,
    })
    expect(resolve(options, PROXY, { 'x-forwarded-for': ['9.9.9.9', ''] })?.key).toBe(PROXY)
    expect(resolve({ trustProxy: 1 }, PROXY, { 'x-forwarded-for': '9.9.9.9, ' })?.key).toBe(PROXY)
  })

  it('keys on the socket peer when the header is there but empty', () => {
    for (const xff of ['', ' ', ['']]) {
      expect(resolve(options, PROXY, { 'x-forwarded-for': xff })).toEqual({
        ip: PROXY,
        key: PROXY,
        hops: 0,
      })
    }
  })

  it('uses the left-most address when every hop is trusted', () => {
    expect(resolve(options, PROXY, { 'x-forwarded-for': '10.1.1.1, 10.2.2.2' })?.key).toBe(
      '10.1.1.1',
    )
  })

  it('keys an IPv6 client behind the proxy by its /64, and a mapped one as IPv4', () => {
    expect(resolve(options, PROXY, { 'x-forwarded-for': '2001:db8:a:b:c::1' })?.key).toBe(
      '2001:db8:a:b::/64',
    )
    expect(resolve(options, PROXY, { 'x-forwarded-for': '::ffff:203.0.113.7' })?.key).toBe(
      '203.0.113.7',
    )
  })

  it('accepts ports and brackets in entries, as some proxies write them', () => {
    expect(resolve(options, PROXY, { 'x-forwarded-for': '203.0.113.7:51234' })?.key).toBe(
      '203.0.113.7',
    )
    expect(resolve(options, PROXY, { 'x-forwarded-for': '[2001:db8::1]:443' })?.ip).toBe(
      '2001:db8::1',
    )
  })

  it('trusts named ranges: loopback', () => {
    const client = resolve({ trustProxy: 'loopback' }, '::1', { 'x-forwarded-for': '203.0.113.7' })
    expect(client?.key).toBe('203.0.113.7')
  })

  it('throws for a list entry that is not an address or range', () => {
    let caught: unknown
    try {
      resolve({ trustProxy: ['10.0.0.0/8', 'lb.internal'] }, PROXY)
    } catch (error) {
      caught = error
    }
    expect(isRateLimitError(caught) && caught.field).toBe('trustProxy')
  })

  it.each(['constructor', '__proto__', 'toString'])(
    'refuses %j, a name every object inherits, as it refuses any unknown name',
    (trustProxy) => {
      let caught: unknown
      try {
        resolve({ trustProxy }, PROXY)
      } catch (error) {
        caught = error
      }
      expect(isRateLimitError(caught)).toBe(true)
      expect(caught).toMatchObject({ code: 'ERR_RL_INVALID_OPTION', field: 'trustProxy' })
    },
  )
})

describe('proxyHeader: forwarded (RFC 7239)', () => {
  const options = { trustProxy: ['10.0.0.0/8'], proxyHeader: 'forwarded' as const }

  it('walks for= right to left, with quotes, brackets and ports', () => {
    const forwarded = 'for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.9'
    expect(resolve(options, PROXY, { forwarded })).toEqual({
      ip: '2001:db8:cafe::17',
      key: '2001:db8:cafe::/64',
      hops: 2,
    })
  })

  it('a client cannot pick its key with its own Forwarded element', () => {
    const forwarded = 'for=1.2.3.4, for=203.0.113.7'
    expect(resolve(options, PROXY, { forwarded })?.key).toBe('203.0.113.7')
  })

  it('a client cannot swallow the proxy element with an unterminated quote', () => {
    const forwarded = 'for="1.2.3.4, for=203.0.113.7'
    expect(resolve(options, PROXY, { forwarded })?.key).toBe('203.0.113.7')
  })

  it('a client cannot swallow the proxy element with a quote that ends inside it', () => {
    const loopback = { trustProxy: 'loopback', proxyHeader: 'forwarded' as const }
    // The client's line, then the loopback proxy's, as Node joins them.
    for (const forwarded of [
      'for="x, for="[2001:db8:c::1]"',
      'for=1.2.3.4;x=", for="[2001:db8:c::1]:4711";proto="https"',
    ]) {
      expect(resolve(loopback, '127.0.0.1', { forwarded })).toEqual({
        ip: '2001:db8:c::1',
        key: '2001:db8:c::/64',
        hops: 1,
      })
    }
  })

  it('reads addresses with RFC 7239 obfuscated ports', () => {
    expect(resolve(options, PROXY, { forwarded: 'for="2.2.2.2:_x"' })?.key).toBe('2.2.2.2')
    expect(resolve(options, PROXY, { forwarded: 'for="[2001:db8::1]:_p1"' })?.key).toBe(
      '2001:db8::/64',
    )
  })

  it('stops at an empty element, the last one too: the reporting proxy is the key', () => {
    expect(resolve(options, PROXY, { forwarded: 'for=9.9.9.9, ' })?.key).toBe(PROXY)
    expect(resolve(options, PROXY, { forwarded: ['for=9.9.9.9', ''] })?.key).toBe(PROXY)
    expect(resolve(options, PROXY, { forwarded: '' })).toEqual({ ip: PROXY, key: PROXY, hops: 0 })
  })

  it('stops at "unknown" or an obfuscated node: the reporting proxy is the key', () => {
    expect(resolve(options, PROXY, { forwarded: 'for=1.2.3.4, for=unknown' })?.key).toBe(PROXY)
    expect(resolve(options, PROXY, { forwarded: 'for=1.2.3.4, for=_hidden' })?.key).toBe(PROXY)
  })

  it('reads several Forwarded lines as one list', () => {
    const client = resolve(options, PROXY, {
      forwarded: ['for=1.2.3.4', 'for=203.0.113.7;proto=http'],
    })
    expect(client?.key).toBe('203.0.113.7')
  })

  it('precedence: only the configured header is read, so the other cannot be used to spoof', () => {
    const both = { forwarded: 'for=203.0.113.7', 'x-forwarded-for': '1.2.3.4' }
    expect(resolve(options, PROXY, both)?.key).toBe('203.0.113.7')
    expect(resolve({ trustProxy: ['10.0.0.0/8'] }, PROXY, both)?.key).toBe('1.2.3.4')
  })
})

describe('trustProxy as a hop count', () => {
  it('1: the socket peer is the one proxy, the right-most entry is the client', () => {
    const client = resolve({ trustProxy: 1 }, PROXY, { 'x-forwarded-for': '1.2.3.4, 203.0.113.7' })
    expect(client).toEqual({ ip: '203.0.113.7', key: '203.0.113.7', hops: 1 })
  })

  it('2: a CDN and a load balancer; forged entries to the left are ignored', () => {
    const xff = '6.6.6.6, 203.0.113.7, 198.51.100.20'
    expect(resolve({ trustProxy: 2 }, PROXY, { 'x-forwarded-for': xff })?.key).toBe('203.0.113.7')
  })

  it('0 is the same as false', () => {
    expect(resolve({ trustProxy: 0 }, PROXY, { 'x-forwarded-for': '1.2.3.4' })?.key).toBe(PROXY)
  })

  it('warns once when a request came through fewer hops than configured', () => {
    const { messages, logger } = recorder()
    const clientIp = createClientIpResolver({ trustProxy: 2, logger })
    // A client that reached the load balancer directly, with a forged entry.
    expect(clientIp(PROXY, headers({ 'x-forwarded-for': '6.6.6.6' }))?.key).toBe('6.6.6.6')
    clientIp(PROXY, headers({}))
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(/^\[tollgate\] WARN_HOP_COUNT_EXCEEDS_CHAIN: /)
  })

  it.each([-1, 1.5, Number.NaN])('refuses %s', (trustProxy) => {
    expect(() => resolve({ trustProxy }, PROXY)).toThrow(/trustProxy/)
  })
})

describe('trustProxy: true', () => {
  it('believes every hop (the left-most address) and warns WARN_TRUST_ALL_PROXIES at construction', () => {
    const { messages, logger } = recorder()
    const clientIp = createClientIpResolver({ trustProxy: true, logger })
    expect(messages).toEqual([expect.stringMatching(/^\[tollgate\] WARN_TRUST_ALL_PROXIES: /)])
    expect(clientIp(PROXY, headers({ 'x-forwarded-for': '1.2.3.4, 203.0.113.7' }))?.key).toBe(
      '1.2.3.4',
    )
  })

  it('warns the same for a list with a range of every address, naming its family', () => {
    const { messages, logger } = recorder()
    createClientIpResolver({ trustProxy: ['10.0.0.0/8', '::/0'], logger })
    expect(messages).toEqual([
      expect.stringMatching(/^\[tollgate\] WARN_TRUST_ALL_PROXIES: trustProxy covers every IPv6 /),
    ])
  })

  it('warns for ranges that only together cover every address of a family', () => {
    const { messages, logger } = recorder()
    createClientIpResolver({ trustProxy: ['0.0.0.0/1', '128.0.0.0/1'], logger })
    createClientIpResolver({ trustProxy: '0.0.0.0/1, 128.0.0.0/1, ::/1, 8000::/1', logger })
    createClientIpResolver({ trustProxy: ['0.0.0.0/1', '::/1', 'private'], logger })
    expect(messages).toEqual([
      expect.stringMatching(/WARN_TRUST_ALL_PROXIES: trustProxy covers every IPv4 address/),
      expect.stringMatching(/WARN_TRUST_ALL_PROXIES: trustProxy covers every IPv4 and IPv6 /),
    ])
  })
})

describe('compileClientIp key', () => {
  const ADDRESSES = [
    '203.0.113.7',
    '0.0.0.0',
    '255.255.255.255',
    '::ffff:203.0.113.7',
    '::FFFF:203.0.113.7',
    '::ffff:cb00:7107',
    ' 203.0.113.7',
    '203.0.113.7:8080',
    '203.0.113.07',
    '203.0.113',
    '::ffff:203.0.113.07',
    '::ffff:203.0.113.7%eth0',
    '2001:db8::1',
    '::1',
    'not an address',
    '',
    undefined,
  ]

  it('gives every socket address the key the full resolver gives it', () => {
    for (const options of [{}, { ipv4Prefix: 24 }, { ipv6Prefix: 128 }, { trustProxy: 1 }]) {
      const { address, key } = compileClientIp({ ...options, logger: false }, trustedProxies)
      for (const socket of ADDRESSES) {
        expect(key(socket, {}, readRecord), `${socket} ${JSON.stringify(options)}`).toBe(
          address(socket, headers({}))?.key,
        )
      }
    }
  })

  it('still warns about forwarding headers on the shortcut for canonical addresses', () => {
    const { messages, logger } = recorder()
    const { key } = compileClientIp({ logger }, trustedProxies)
    key('203.0.113.7', {}, readRecord)
    expect(messages).toEqual([])
    key('::ffff:203.0.113.7', { forwarded: 'for=198.51.100.1' }, readRecord)
    key('203.0.113.7', { 'x-forwarded-for': '198.51.100.1' }, readRecord)
    expect(messages).toEqual([expect.stringContaining('WARN_FORWARDED_HEADERS_IGNORED')])
  })
})

describe('the forwarding header check on the key path', () => {
  /** A resolver trusting no proxy, the warnings it gave and the header reads it made. */
  function setup() {
    const { messages, logger } = recorder()
    let reads = 0
    const { key } = compileClientIp({ logger }, trustedProxies)
    const read = (forwarded: boolean, name: string) => {
      reads++
      return forwarded && name === 'x-forwarded-for' ? '198.51.100.1' : undefined
    }
    const request = (forwarded: boolean) => key('203.0.113.7', forwarded, read)
    return { request, reads: () => reads, warnings: () => messages.length }
  }

  it('looks at every one of the first 1,024 requests, then one in 64', () => {
    const { request, reads } = setup()
    for (let i = 0; i < 1024; i++) request(false)
    expect(reads()).toBe(2048)
    for (let i = 0; i < 64 * 100; i++) request(false)
    expect(reads()).toBe(2048 + 2 * 100)
  })

  it('looks at the 1,088th request, then every 64th after it', () => {
    const { request, reads } = setup()
    const looked: number[] = []
    for (let i = 1; i <= 3000; i++) {
      const before = reads()
      request(false)
      if (reads() > before) looked.push(i)
    }
    const expected = Array.from({ length: 1024 }, (_, i) => i + 1)
    for (let i = 1088; i <= 3000; i += 64) expected.push(i)
    expect(looked).toEqual(expected)
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

describe('forwarding headers that name the address itself', () => {
  // Cloudflare sets X-Forwarded-For to the client it sees, appended to any the client sent, and
  // gives a Worker that client as CF-Connecting-IP: the address the request is keyed by.
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['198.51.100.1, 203.0.113.7', '203.0.113.7'],
    ['198.51.100.1,2001:db8::1', '2001:db8::1'],
  ])('X-Forwarded-For %j with the address %s warns nothing, and is read no more', (xff, ip) => {
    const { messages, logger } = recorder()
    let reads = 0
    const { key } = compileClientIp({ logger }, trustedProxies)
    const read = (values: Record<string, string>, name: string) => {
      reads++
      return values[name]
    }
    for (let i = 0; i < 10; i++) key(ip, { 'x-forwarded-for': xff }, read)
    expect(messages).toEqual([])
    expect(reads).toBe(1)
    // A proxy in front would have written another address: that still warns, elsewhere.
    const other = compileClientIp({ logger }, trustedProxies).key
    other(PROXY, { 'x-forwarded-for': xff }, readRecord)
    expect(messages).toEqual([expect.stringContaining('WARN_FORWARDED_HEADERS_IGNORED')])
  })

  it('the full resolver agrees', () => {
    const { messages, logger } = recorder()
    const clientIp = createClientIpResolver({ logger })
    clientIp('2001:db8::1', headers({ 'x-forwarded-for': '2001:db8::1' }))
    expect(messages).toEqual([])
  })
})

describe('a resolver whose proxies part has no watch (composed without trustedProxies)', () => {
  it('reads no forwarding header and warns nothing, on either path', () => {
    const { messages, logger } = recorder()
    const walkOnly = ((...args: Parameters<typeof trustedProxies>) =>
      trustedProxies(...args)) as ProxyTrust
    const { key, address } = compileClientIp({ logger }, walkOnly)
    const read = (_values: unknown, name: string) => {
      throw new Error(`read ${name}`)
    }
    expect(key('203.0.113.7', {}, read)).toBe('203.0.113.7')
    expect(key('2001:db8::1', {}, read)).toBe('2001:db8::/64')
    expect(address(PROXY, (name) => read({}, name))).toEqual({ ip: PROXY, key: PROXY, hops: 0 })
    expect(messages).toEqual([])
    // Trusting a proxy still walks the header with it.
    const behind = compileClientIp({ logger, trustProxy: 'loopback' }, walkOnly)
    expect(behind.key('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }, readRecord)).toBe(
      '203.0.113.7',
    )
  })
})

describe('warn-once checks', () => {
  it('WARN_FORWARDED_HEADERS_IGNORED fires once, only when forwarding headers arrive untrusted', () => {
    const { messages, logger } = recorder()
    const clientIp = createClientIpResolver({ logger })
    clientIp('203.0.113.7', headers({}))
    expect(messages).toEqual([])
    clientIp(PROXY, headers({ 'x-forwarded-for': '203.0.113.7' }))
    clientIp(PROXY, headers({ forwarded: 'for=203.0.113.7' }))
    clientIp(PROXY, headers({ 'x-forwarded-for': '198.51.100.1' }))
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(/^\[tollgate\] WARN_FORWARDED_HEADERS_IGNORED: /)
  })

  it.each([[[]], [''], [' ']])(
    'WARN_FORWARDED_HEADERS_IGNORED fires for trustProxy %j too: it trusts no proxy',
    (trustProxy) => {
      const { messages, logger } = recorder()
      const clientIp = createClientIpResolver({ trustProxy, logger })
      expect(clientIp(PROXY, headers({ 'x-forwarded-for': '203.0.113.7' }))).toEqual({
        ip: PROXY,
        key: PROXY,
        hops: 0,
      })
      expect(messages).toEqual([expect.stringContaining('WARN_FORWARDED_HEADERS_IGNORED')])
    },
  )

  it('WARN_CLIENT_ADDRESS_UNKNOWN fires once', () => {
    const { messages, logger } = recorder()
    const clientIp = createClientIpResolver({ logger })
    clientIp(undefined, headers({}))
    clientIp('not an address', headers({}))
    expect(messages).toEqual([expect.stringContaining('WARN_CLIENT_ADDRESS_UNKNOWN')])
  })

  it('WARN_IPV6_UNMASKED fires for a prefix longer than 64', () => {
    const { messages, logger } = recorder()
    createClientIpResolver({ ipv6Prefix: 128, logger })
    createClientIpResolver({ ipv6Prefix: 56, logger })
    expect(messages).toEqual([expect.stringContaining('WARN_IPV6_UNMASKED')])
  })

  it('ignoreWarnings silences chosen codes; logger: false silences all', () => {
    const { messages, logger } = recorder()
    createClientIpResolver({ trustProxy: true, logger, ignoreWarnings: ['WARN_TRUST_ALL_PROXIES'] })
    createClientIpResolver({ trustProxy: true, logger: false })
    expect(messages).toEqual([])
  })

  it('each resolver instance warns on its own', () => {
    const { messages, logger } = recorder()
    createClientIpResolver({ trustProxy: true, logger })
    createClientIpResolver({ trustProxy: true, logger })
    expect(messages).toHaveLength(2)
  })
})

describe('prefix options', () => {
  it.each([
    ['ipv4Prefix', 33],
    ['ipv6Prefix', 129],
    ['ipv6Prefix', -1],
    ['ipv4Prefix', 12.5],
  ] as const)('refuses %s: %s', (field, value) => {
    expect(() => resolve({ [field]: value }, PROXY)).toThrow(field)
  })
})
