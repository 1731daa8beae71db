/**
 * `@tollgate/core/node`: what adapters for Node's `http` frameworks (Express, Koa) share, the
 * field sink for a `ServerResponse`, the watcher of its end, whether Node may have cut a
 * request's header list, the event-loop delay signal for load shedding, and a watcher that
 * keeps the rules in step with a rules file. The only part of
 * core written for Node; it types Node's objects by their shape and imports nothing from Node
 * statically (the delay monitor is reached through `process.getBuiltinModule`).
 * @module @tollgate/core/node
 */
export { meterNodeBody, type NodeResponseBody } from './body-meter.js'
export { closeSignal, type NodeResponseClose } from './close-signal.js'
export { type EventLoopDelayOptions, eventLoopDelay } from './event-loop-delay.js'
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
export {
  type RulesFileSystem,
  type RulesFileWatch,
  type RulesFileWatcher,
  type RulesFileWatcherOptions,
  type RulesReload,
  type RulesTarget,
  watchRulesFile,
} from './rules-file-watcher.js'
