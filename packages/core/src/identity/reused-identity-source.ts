import type { HeaderAccessor } from '../headers/types.js'
import type { Identities, IdentitySource } from './identities.js'

/**
 * One header accessor and one identity source for every request of a middleware, filled with
 * the request whose identities are being resolved. The resolver reads them only while it runs,
 * synchronously, so a middleware needs no new objects or closures per request (garbage on
 * every request). `Request` is whatever the framework reads headers from.
 * @example
 * const source = new ReusedIdentitySource<IncomingHttpHeaders>((headers, name) => headers[name])
 * const identities = source.identities(gate.requestIdentities, req.socket.remoteAddress, req.headers, user)
 */
export class ReusedIdentitySource<Request> {
  private request: Request | undefined = undefined
  private readonly source: {
    socketAddress: string | undefined
    header: HeaderAccessor
    user: IdentitySource['user']
    headersCut: boolean
  }

  constructor(readHeader: (request: Request, name: string) => ReturnType<HeaderAccessor>) {
    const header: HeaderAccessor = (name) =>
      this.request === undefined ? undefined : readHeader(this.request, name)
    this.source = { socketAddress: undefined, header, user: undefined, headersCut: false }
  }

  /**
   * A request's identities, its headers read from `request` (during this call only).
   * `headersCut`: the header list may have been cut (`headerListMayBeCut`).
   */
  identities(
    resolve: (source: IdentitySource) => Identities,
    socketAddress: string | undefined,
    request: Request,
    user: IdentitySource['user'],
    headersCut = false,
  ): Identities {
    const source = this.source
    this.request = request
    source.socketAddress = socketAddress
    source.user = user
    source.headersCut = headersCut
    try {
      return resolve(source)
    } finally {
      this.request = undefined
      source.socketAddress = undefined
      source.user = undefined
      source.headersCut = false
    }
  }
}
