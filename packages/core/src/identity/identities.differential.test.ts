// API-key reading moved into its own part (`apiKeyIdentity`, handed to `compileIdentities`): the
// identities it gives are the old `compileIdentities`'s (copied below) for every option and
// request.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { headerText } from '../headers/types.js'
import { type ClientIp, compileClientIp, type HeaderReader } from './client-ip.js'
import {
  apiKeyIdentity,
  compileIdentities,
  type IdentityOptions,
  type RequestIdentities,
  type UserId,
} from './identities.js'
import { trustedProxies } from './proxy-trust.js'

type Source = Readonly<Record<string, string | string[] | undefined>>

function oldCompileIdentities<Source>(
  options: IdentityOptions,
  read: HeaderReader<Source>,
  clientIp: ClientIp,
  apiKey: boolean,
  incoming?: undefined,
): RequestIdentities<Source> {
  const apiKeyHeader = options.apiKeyHeader === undefined ? 'x-api-key' : options.apiKeyHeader
  const headerName = apiKeyHeader === false ? false : apiKeyHeader.toLowerCase()
  const bearer = options.bearerAsApiKey ?? false
  const maxLength = options.maxApiKeyLength ?? 256
  const readsApiKey = apiKey && (headerName !== false || bearer)

  function apiKeyOf(source: Source): string | undefined {
    let key = headerName === false ? undefined : headerText(read(source, headerName))?.trim()
    if ((key === undefined || key === '') && bearer)
      key = oldBearerToken(headerText(read(source, 'authorization')))
    return key === undefined || key === '' || key.length > maxLength ? undefined : key
  }

  function identities(source: Source, socketAddress: string | undefined, given: unknown) {
    const user = given as UserId
    return {
      ip: clientIp.key(socketAddress, source, read, incoming),
      api_key: readsApiKey ? apiKeyOf(source) : undefined,
      user: user === undefined || user === null || user === '' ? undefined : String(user),
    }
  }
  return identities
}
function oldBearerToken(authorization: string | undefined): string | undefined {
  return /^bearer[ \t](.*)/is.exec(authorization?.trim() ?? '')?.[1]?.trim()
}

const header = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('k_1', ' k_2 ', '', 'Bearer t_1', 'bearer\tt_2 ', 'Basic x', 'x'.repeat(300)),
  fc.array(fc.constantFrom('k_1', 'Bearer t', ''), { maxLength: 2 }),
)
const source = fc.record({ 'x-api-key': header, 'x-key': header, authorization: header })
const options = fc.record(
  {
    apiKeyHeader: fc.constantFrom(undefined, false, 'x-key', 'X-API-Key'),
    bearerAsApiKey: fc.constantFrom(undefined, true, false),
    maxApiKeyLength: fc.constantFrom(undefined, null, 2, 256),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<IdentityOptions>
const user = fc.constantFrom<UserId>(undefined, null, '', 'u_1', 7)

describe('compileIdentities with apiKeyIdentity', () => {
  it('gives the identities the old compileIdentities gave', () => {
    const read: HeaderReader<Source> = (s, name) => s[name]
    fc.assert(
      fc.property(options, fc.boolean(), source, user, (given, keysOn, s, u) => {
        const clientIp = compileClientIp({ logger: false }, trustedProxies)
        const old = oldCompileIdentities<Source>(given, read, clientIp, keysOn)
        const now = compileIdentities<Source>(read, clientIp, apiKeyIdentity(given, read, keysOn))
        expect(now(s, '203.0.113.7', u)).toEqual(old(s, '203.0.113.7', u))
      }),
      { numRuns: 2000 },
    )
  })
})
