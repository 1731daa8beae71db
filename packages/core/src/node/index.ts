/**
 * `@tollgate/core/node`: what adapters for Node's `http` frameworks (Express, Koa) share, the
 * field sink for a `ServerResponse` and the watcher of its end. The only part of core written
 * for Node; it types Node's objects by their shape and imports nothing from Node.
 */
export {
  type NodeResponse,
  NodeResponseFieldWriter,
  setNodeResponseFields,
} from './node-response-fields.js'
export { endWhenFinished, type NodeResponseEvents } from './response-end.js'
