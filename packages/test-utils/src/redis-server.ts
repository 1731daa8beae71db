import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A redis-server of a test's or a benchmark's own, on its own port and in its own temp dir. */
export type RedisServer = {
  readonly port: number
  readonly url: string
  readonly dir: string
  /** SIGSTOP: the server keeps its connections but answers nothing (a hung Redis). */
  pause(): void
  /** SIGCONT. */
  resume(): void
  /** SIGKILL and wait for the exit: the server is gone, connections drop. */
  kill(): Promise<void>
  /** Starts it again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>
  /** Kills it and removes its directory. */
  stop(): Promise<void>
}

const running = new Set<ChildProcess>()
// A run that dies half-way must not leave servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** A port that is free, and (for cluster nodes) whose bus port, port + 10000, is free too. */
export async function freePort(withBus = false): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 25000)
    if ((await canBind(port)) && (!withBus || (await canBind(port + 10000)))) return port
  }
  throw new Error('no free port found for a redis-server')
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** Polls PING until the server answers, for at most `timeoutMs`. */
async function waitForPing(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await pings(port)) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`)
}

function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket()
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(500, () => done(false))
    socket.once('error', () => done(false))
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')))
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'))
  })
}

/**
 * Starts redis-server on `port` (or a free one), empty and without persistence, in a temp dir of
 * its own; `cluster` enables cluster mode, `extraArgs` go on its command line as they are.
 */
export async function startRedisServer(
  options: {
    readonly cluster?: boolean
    readonly port?: number
    readonly extraArgs?: readonly string[]
  } = {},
): Promise<RedisServer> {
  const port = options.port ?? (await freePort(options.cluster))
  const dir = await mkdtemp(join(tmpdir(), `tollgate-redis-${port}-`))
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
  ]
  if (options.cluster) {
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`)
    args.push('--cluster-node-timeout', '5000')
  }
  args.push(...(options.extraArgs ?? []))
  let child = await launch(args, port)

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    kill: () => killChild(child),
    async restart() {
      await killChild(child)
      child = await launch(args, port)
    },
    async stop() {
      await killChild(child)
      await rm(dir, { recursive: true, force: true })
    },
  }
}

async function launch(args: string[], port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: 'ignore' })
  const failed = new Promise<never>((_, reject) => child.once('error', reject))
  running.add(child)
  child.once('exit', () => running.delete(child))
  await Promise.race([failed, waitForPing(port)])
  return child
}

function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGCONT')
    child.kill('SIGKILL')
  })
}

/** Runs redis-cli with the given arguments and returns its output. */
export function redisCli(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', [...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`redis-cli ${args.join(' ')}: ${error.message}\n${stderr}`))
      else resolve(stdout)
    })
  })
}
