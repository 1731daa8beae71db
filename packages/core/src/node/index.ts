/**
 * `@tollgate/core/node`: what adapters for Node's `http` frameworks (Express, Koa) share, the
 * field sink for a `ServerResponse`, the watcher of its end, whether Node may have cut a
 * request's header list, and Node's synchronous SHA-256 for partition keys. The only part of
 * core written for Node; it types Node's objects by their shape and imports nothing from Node
 * statically (the hash is reached through `process.getBuiltinModule`).
 */
export { closeSignal, type NodeResponseClose } from './close-signal.js'
export {
  headerListMayBeCut,
  NODE_DEFAULT_MAX_HEADERS_COUNT,
  type NodeIncomingHeaders,
} from './node-header-limit.js'
export {
  type NodeResponse,
  NodeResponseFieldWriter,
  setNodeResponseFields,
} from './node-response-fields.js'
export { endWhenFinished, type NodeResponseEvents } from './response-end.js'
export { nodeSha256 } from './sha256.js'
