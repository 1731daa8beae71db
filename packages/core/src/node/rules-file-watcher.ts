import type { MaybePromise, RulesUpdate } from '../limiter/types.js'
import type { RulesTextFormat } from '../rules/load-text.js'
import type { Rule } from '../rules/types.js'
import type { Timers } from '../wait/scheduler.js'
import type { Logger } from '../warnings.js'

/** What a rules file is loaded into: a middleware (`rateLimit(…)`) or a limiter, by `update`. */
export type RulesTarget = {
  /**
   * Swaps the running rules, or throws (rejects) and keeps them. A limiter without it
   * (`observedLimiter`, a middleware composed without `rulesUpdater`) is refused.
   */
  readonly update?: ((rules: readonly Rule[]) => MaybePromise<RulesUpdate>) | undefined
}

/** What one reload of a rules file did. */
export type RulesReload =
  /** The file's rules run now; `update` says, by rule id, what changed. */
  | { readonly outcome: 'applied'; readonly update: RulesUpdate }
  /** The file holds the text last read from it: nothing was done. */
  | { readonly outcome: 'unchanged' }
  /**
   * The file could not be read, was not valid YAML or JSON, or its rules were refused by
   * `update`: the running rules stay. `error` says why.
   */
  | { readonly outcome: 'refused'; readonly error: unknown }

/** How `watchRulesFile` reads the file and learns that it changed (Node's `fs`, or a test's). */
export type RulesFileSystem = {
  /** The file's whole text. */
  readFile(path: string): Promise<string>
  /** Calls `changed` when the file may have changed; `close` stops it. */
  watch(path: string, changed: () => void): RulesFileWatch
}

/** A watch `RulesFileSystem.watch` started. */
export type RulesFileWatch = {
  /** Stops the watch: `changed` is not called after it. */
  close(): void
}

/** Options of `watchRulesFile`. */
export type RulesFileWatcherOptions = {
  /**
   * Reads the file's text into rules: `loadRulesText` from `@tollgate/core/rules-file`. Given
   * rather than imported, so that this entry (which Hono's bundles reach for its header check)
   * holds no rules parser.
   */
  readonly load: (text: string, format: RulesTextFormat) => readonly Rule[]
  /** How the file is written. @default 'json' for a name ending in `.json`, else 'yaml' */
  readonly format?: RulesTextFormat | undefined
  /**
   * How long the file must stay unchanged before it is read, in ms: an editor or a deployment
   * writes a file in several steps, and only the last is meant. @default 100
   */
  readonly debounceMs?: number | undefined
  /**
   * Look at the file every `pollMs` instead of waiting for the system's change events: for file
   * systems that send none (some network and container mounts). Each look reads the file whole
   * and compares its text with the previous look's; a change (or a file that cannot be read)
   * is then waited on for `debounceMs` of quiet like a change event. @default false (Node's
   * `fs.watch` on the file's directory)
   */
  readonly pollMs?: number | false | undefined
  /** Where refusals are logged (`WARN_RULES_FILE_REFUSED`). @default globalThis.console */
  readonly logger?: Logger | false | undefined
  /** Told each reload's outcome, refusals included (for a counter or an alert of the app's). */
  readonly onReload?: ((reload: RulesReload) => void) | undefined
  /** The timers of the debounce and the polling; tests give their own. @default the runtime's */
  readonly timers?: Timers | undefined
  /** How the file is read and watched; tests give their own. @default Node's `fs` */
  readonly files?: RulesFileSystem | undefined
}

/** A rules file being watched: `reload` on demand, `close` to stop. */
export type RulesFileWatcher = {
  /** Reads the file now, whole, and updates the rules (after any reload under way). */
  reload(): Promise<RulesReload>
  /** Reloads refused so far: unreadable files, invalid text, rules `update` refused. */
  readonly refused: number
  /**
   * Stops watching: no change starts a reload after it (one under way finishes); `reload()`
   * still reads the file when asked.
   */
  close(): void
}

/**
 * Keeps a middleware's (or a limiter's) rules in step with a rules file: when the file changes,
 * it is read whole after `debounceMs` of quiet, loaded with `load` (`loadRulesText`) and passed to
 * `update`. A file that cannot be read, parsed or validated is refused whole: the running rules
 * stay, the refusal is logged as `WARN_RULES_FILE_REFUSED`, counted in `refused` and told to
 * `onReload`. `reload()` does the same on demand (an admin route, a `SIGHUP`); `close()` stops
 * it. Node only (it reads files): exported from `@tollgate/core/node`.
 * @example
 * const limit = rateLimit(loadRulesText(readFileSync('rules.yaml', 'utf8'), 'yaml'))
 * const watcher = watchRulesFile(limit, 'rules.yaml', { load: loadRulesText })
 * process.on('SIGHUP', () => void watcher.reload())
 */
export function watchRulesFile(
  target: RulesTarget,
  path: string,
  options: RulesFileWatcherOptions,
): RulesFileWatcher {
  const given = target?.update
  if (typeof given !== 'function') {
    throw new TypeError(
      '[tollgate] watchRulesFile: expected a middleware or a limiter with update(rules) (a middleware composed with createRateLimit needs update: rulesUpdater in its parts)',
    )
  }
  const update = given.bind(target)
  if (typeof path !== 'string' || path === '') {
    throw new TypeError('[tollgate] watchRulesFile: path: expected the rules file’s path')
  }
  const load = options?.load
  if (typeof load !== 'function') {
    throw new TypeError(
      "[tollgate] watchRulesFile: load: expected loadRulesText (import { loadRulesText } from '@tollgate/core/rules-file')",
    )
  }
  const format = options.format ?? (path.endsWith('.json') ? 'json' : 'yaml')
  const debounceMs = checkMs('debounceMs', options.debounceMs ?? 100)
  const pollMs = options.pollMs === false ? false : options.pollMs
  if (pollMs !== undefined && pollMs !== false) checkMs('pollMs', pollMs)
  const timers = options.timers ?? runtimeTimers()
  const logger = options.logger ?? (globalThis as { console?: Logger }).console ?? false
  const files = options.files ?? nodeFiles()

  let refused = 0
  let closed = false
  /** The text last read from the file (applied or refused): the same text is not loaded twice. */
  let lastText: string | undefined
  /** Reloads run one after another, in the order asked. */
  let queue: Promise<unknown> = Promise.resolve()
  let debounce: unknown
  let poll: unknown

  function refuse(error: unknown): RulesReload {
    refused++
    if (logger !== false) {
      try {
        logger.warn(
          `[tollgate] WARN_RULES_FILE_REFUSED: ${path} was not loaded; the running rules stay: ${messageOf(error)}`,
        )
      } catch {
        // A broken logger must not stop the watching.
      }
    }
    return { outcome: 'refused', error }
  }

  async function readAndUpdate(force: boolean): Promise<RulesReload> {
    let text: string
    try {
      text = await files.readFile(path)
    } catch (error) {
      return refuse(error)
    }
    if (!force && text === lastText) return { outcome: 'unchanged' }
    lastText = text
    try {
      return { outcome: 'applied', update: await update(load(text, format)) }
    } catch (error) {
      return refuse(error)
    }
  }

  function run(force: boolean): Promise<RulesReload> {
    const next = queue.then(async () => {
      const reload =
        closed && !force ? ({ outcome: 'unchanged' } as const) : await readAndUpdate(force)
      if (reload.outcome !== 'unchanged') tell(reload)
      return reload
    })
    queue = next.catch(() => undefined)
    return next
  }

  function tell(reload: RulesReload): void {
    try {
      options.onReload?.(reload)
    } catch {
      // The app's hook must not stop the watching.
    }
  }

  /** A change seen: read the file once it has been quiet for `debounceMs`. */
  function changed(): void {
    if (closed) return
    if (debounce !== undefined) timers.clearTimeout(debounce)
    debounce = timers.setTimeout(() => {
      debounce = undefined
      void run(false)
    }, debounceMs)
  }

  let watcher: RulesFileWatch | undefined
  if (pollMs === undefined || pollMs === false) {
    watcher = files.watch(path, changed)
  } else {
    const every = pollMs
    // Each look reads the file and compares it with what the previous look read: a change is
    // waited on for quiet as a change event is. The first read is the baseline.
    let seen: string | undefined
    const read = () => files.readFile(path).catch(() => undefined)
    const look = async () => {
      poll = undefined
      const text = await read()
      if (closed) return
      if (text !== seen) {
        seen = text
        changed()
      }
      poll = timers.setTimeout(look, every)
    }
    void read().then((text) => {
      seen = text
      if (!closed) poll = timers.setTimeout(look, every)
    })
  }

  return {
    reload: () => run(true),
    get refused() {
      return refused
    },
    close() {
      if (closed) return
      closed = true
      if (debounce !== undefined) timers.clearTimeout(debounce)
      if (poll !== undefined) timers.clearTimeout(poll)
      watcher?.close()
    },
  }
}

/**
 * The runtime's timers. Not `systemTimers`: this entry shares no module with the portable core
 * that it did not before, so that the core's chunks (and the bundles that cross them) stay as
 * they are.
 */
function runtimeTimers(): Timers {
  const runtime = globalThis as unknown as Timers
  return {
    setTimeout: (callback, ms) => runtime.setTimeout(callback, ms),
    clearTimeout: (handle) => runtime.clearTimeout(handle),
  }
}

function checkMs(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(
      `[tollgate] watchRulesFile: ${name}: expected a number of ms ≥ 0, got ${String(value)}`,
    )
  }
  return value
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** What is used of Node's `fs` and `path` (core is typed without Node's types). */
type NodeFs = {
  promises: { readFile(path: string, encoding: 'utf8'): Promise<string> }
  watch(
    path: string,
    listener: (event: string, filename: string | null) => void,
  ): { close(): void; on(event: 'error', listener: (error: unknown) => void): unknown }
}
type NodePath = { dirname(path: string): string; basename(path: string): string }

/**
 * Node's `fs`, reached through `process.getBuiltinModule` (never imported, as the rest of this
 * entry). The file's directory is watched, not the file: an editor or a deployment that replaces
 * the file (a new file renamed over it) leaves a watch on the file itself watching nothing.
 */
function nodeFiles(): RulesFileSystem {
  const process = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } })
    .process
  const fs = process?.getBuiltinModule?.('node:fs') as NodeFs | undefined
  const paths = process?.getBuiltinModule?.('node:path') as NodePath | undefined
  if (fs === undefined || paths === undefined) {
    throw new TypeError(
      '[tollgate] watchRulesFile: this runtime has no node:fs (Node 20.16 or later needed); give files of your own',
    )
  }
  return {
    readFile: (path) => fs.promises.readFile(path, 'utf8'),
    watch(path, changed) {
      const name = paths.basename(path)
      const watcher = fs.watch(paths.dirname(path), (_event, filename) => {
        if (filename === null || filename === name) changed()
      })
      // A directory that goes away ends the watch; `reload` still works.
      watcher.on('error', () => undefined)
      return watcher
    },
  }
}
