// Who the client is: forwarding headers behind trusted proxies, IPv6 networks, API keys, users and
// composite keys (docs/concepts/keys-and-proxies.md).
import { denied, forwardedFor, ok, perIp, type Scenario } from './support.js'

export const KEYS_AND_PROXIES_SCENARIOS: readonly Scenario[] = [
  {
    name: 'with no proxy trusted, X-Forwarded-For is ignored (and its presence warned about once)',
    rules: [perIp(10, 10)],
    steps: [
      { headers: forwardedFor('203.0.113.1'), expect: ok(9) },
      { headers: forwardedFor('203.0.113.2'), expect: ok(8) },
      { expect: ok(7) },
    ],
    warnings: ['WARN_FORWARDED_HEADERS_IGNORED'],
  },
  {
    name: 'behind a trusted loopback proxy, the client cannot pick its key by spoofing X-Forwarded-For',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback' },
    steps: [
      { headers: forwardedFor('203.0.113.7'), expect: ok(9) },
      // The proxy appended the real client; what the client wrote to the left is never read.
      { headers: forwardedFor('198.51.100.1, 203.0.113.7'), expect: ok(8) },
      { headers: forwardedFor('203.0.113.8'), expect: ok(9) },
      // No header: the proxy itself is the client. Forwarded is not the configured header.
      { expect: ok(9) },
      { headers: { forwarded: 'for=192.0.2.1' }, expect: ok(8) },
    ],
  },
  {
    name: 'through a proxy that is not trusted, forwarding headers are ignored',
    rules: [perIp(10, 10)],
    options: { trustProxy: ['10.0.0.0/8'] },
    steps: [
      { headers: forwardedFor('203.0.113.1'), expect: ok(9) },
      { headers: forwardedFor('203.0.113.2'), expect: ok(8) },
    ],
  },
  {
    name: 'RFC 7239 Forwarded, when configured, is walked the same way',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback', proxyHeader: 'forwarded' },
    steps: [
      { headers: { forwarded: 'for=203.0.113.7' }, expect: ok(9) },
      { headers: { forwarded: 'for=198.51.100.1, for=203.0.113.7;proto=https' }, expect: ok(8) },
      { headers: { forwarded: 'for="[2001:db8::1]:4711"' }, expect: ok(9) },
      { headers: forwardedFor('203.0.113.7'), expect: ok(9) },
    ],
  },
  {
    name: 'IPv6 clients are keyed by /64, IPv4-mapped addresses as IPv4',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback' },
    steps: [
      { headers: forwardedFor('2001:db8:1:2::a'), expect: ok(9) },
      { headers: forwardedFor('2001:db8:1:2:ffff::b'), expect: ok(8) },
      { headers: forwardedFor('2001:db8:1:3::a'), expect: ok(9) },
      { headers: forwardedFor('::ffff:203.0.113.7'), expect: ok(9) },
      { headers: forwardedFor('203.0.113.7'), expect: ok(8) },
    ],
  },
  {
    name: 'a wider IPv6 prefix puts a whole /48 in one bucket',
    rules: [perIp(10, 10)],
    options: { trustProxy: 'loopback', ipv6Prefix: 48 },
    steps: [
      { headers: forwardedFor('2001:db8:1:2::a'), expect: ok(9) },
      { headers: forwardedFor('2001:db8:1:3::a'), expect: ok(8) },
      { headers: forwardedFor('2001:db8:2::1'), expect: ok(9) },
    ],
  },
  {
    name: 'a request without the API key a rule refuses to go without gets a 400, not a free pass',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 10,
        onMissingIdentity: 'deny',
      },
    ],
    steps: [
      {
        times: 2,
        expect: {
          status: 400,
          headers: {
            'content-type': 'application/problem+json',
            'retry-after': undefined,
            'x-ratelimit-remaining': undefined,
          },
          body: { status: 400, code: 'missing-identity' },
        },
      },
      { headers: { 'x-api-key': 'k_1' }, expect: ok(9) },
    ],
  },
  {
    name: 'the missing-identity answer can be a 401 with a challenge',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 10,
        onMissingIdentity: 'deny',
      },
    ],
    options: { missingIdentity: { status: 401, wwwAuthenticate: 'ApiKey realm="shiplane"' } },
    steps: [
      {
        expect: {
          status: 401,
          headers: { 'www-authenticate': 'ApiKey realm="shiplane"' },
          body: { status: 401, code: 'missing-identity' },
        },
      },
    ],
  },
  {
    name: 'without its API key (here a custom header), a request is counted under its IP',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 10,
      },
    ],
    options: { apiKeyHeader: 'x-goog-api-key' },
    steps: [
      { expect: ok(9) },
      { headers: { 'x-api-key': 'k_1' }, expect: ok(8) },
      { headers: { 'x-goog-api-key': 'k_1' }, expect: ok(9) },
    ],
  },
  {
    name: 'the signed-in user is read where the framework keeps it; anonymous requests fall back to the IP',
    rules: [
      { id: 'per-user', match: { identity: 'user' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
    ],
    steps: [
      { headers: { 'x-test-user': 'u1' }, times: 2, expect: (i) => ok(1 - i) },
      { headers: { 'x-test-user': 'u1' }, expect: denied(1, ['per-user']) },
      { headers: { 'x-test-user': 'u2' }, expect: ok(1) },
      { expect: ok(1) },
    ],
  },
  {
    name: 'a composite key limits logins per account and IP together',
    rules: [
      {
        id: 'login-account-ip',
        match: { route: 'POST /v1/login', identity: ['account', 'ip'] },
        algorithm: 'sliding_log',
        limit: 2,
        window: '60s',
      },
    ],
    // The app's identities hook provides the account (see targets.ts).
    options: { customIdentities: ['account'] },
    steps: [
      {
        method: 'POST',
        path: '/v1/login',
        headers: { 'x-account': 'alice' },
        times: 2,
        expect: (i) => ok(1 - i),
      },
      {
        method: 'POST',
        path: '/v1/login',
        headers: { 'x-account': 'alice' },
        expect: denied(60, ['login-account-ip']),
      },
      { method: 'POST', path: '/v1/login', headers: { 'x-account': 'bob' }, expect: ok(1) },
      { method: 'POST', path: '/v1/login', expect: ok(1) },
    ],
  },
]
