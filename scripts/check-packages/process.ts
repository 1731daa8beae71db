import { type ChildProcess, spawn } from 'node:child_process'

export class CommandError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message)
  }
}

/** Runs a command to its end; resolves with its stdout, rejects with both streams on failure. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 180_000,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(stdout)
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`
      const output = `${stdout}\n${stderr}`.trim()
      reject(new CommandError(`${command} ${args.join(' ')} (in ${options.cwd}): ${how}`, output))
    })
  })
}

/**
 * Starts a server process and resolves with its port once it prints `LISTENING <port>`; the
 * caller stops it with `child.kill()`.
 */
export function startServer(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const timer = setTimeout(() => {
      child.kill()
      reject(new CommandError(`node ${args.join(' ')} did not start in 20 s`, output))
    }, 20_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      const listening = /LISTENING (\d+)/.exec(output)
      if (listening === null) return
      clearTimeout(timer)
      resolve({ child, port: Number(listening[1]) })
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new CommandError(`node ${args.join(' ')} exited (${code}) before listening`, output))
    })
  })
}

/** Runs `tasks` with at most `limit` at a time, keeping each one's outcome. */
export async function settleAll<T>(
  tasks: Array<() => Promise<T>>,
  limit: number,
): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++
      try {
        results[index] = { status: 'fulfilled', value: await tasks[index]!() }
      } catch (reason) {
        results[index] = { status: 'rejected', reason }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return results
}
