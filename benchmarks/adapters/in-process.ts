import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { VariantName } from './config.js'
import {
  addedOverBare,
  lowerQuartile,
  measureRounds,
  type RoundsOptions,
  type Send,
} from './measure.js'
import { PEER as EXPRESS_PEER, expressSender } from './targets/express.js'
import { PEER as HONO_PEER, honoSender } from './targets/hono.js'
import { PEER as KOA_PEER, koaSender } from './targets/koa.js'

export const FRAMEWORKS = [
  { name: 'Express 5', peer: EXPRESS_PEER, sender: expressSender },
  { name: 'Koa 3', peer: KOA_PEER, sender: koaSender },
  { name: 'Hono 4', peer: HONO_PEER, sender: honoSender },
] as const

export const VARIANTS: readonly VariantName[] = [
  'bare',
  'naive',
  'fields only',
  'tollgate',
  'tollgate, partition key',
  'tollgate, same headers',
  'peer',
]

export type FrameworkResult = {
  readonly framework: string
  readonly peer: string
  /** CPU µs per request of the bare app (the lower quartile of its rounds). */
  readonly bare: number
  /** CPU µs per request over the bare app's (see `addedOverBare`). */
  readonly added: ReadonlyMap<VariantName, number>
}

/**
 * In-process, one request in flight: every variant of one framework, interleaved, its requests
 * from `clients` client addresses in turn (see clients.ts).
 */
export async function measureFramework(
  framework: (typeof FRAMEWORKS)[number],
  options: RoundsOptions & { readonly clients: number },
): Promise<FrameworkResult> {
  const variants = VARIANTS.map((name) => ({
    name,
    send: framework.sender(name, options.clients) as Send,
  }))
  const samples = await measureRounds(variants, options)
  const added = new Map<VariantName, number>()
  for (const name of VARIANTS) {
    if (name !== 'bare') added.set(name, addedOverBare(samples, 'bare', name))
  }
  return {
    framework: framework.name,
    peer: framework.peer,
    bare: lowerQuartile(samples.get('bare')!),
    added,
  }
}

/** `measureFramework` in a fresh process with this one's Node flags (see in-process-child.ts). */
export function measureFrameworkInChild(
  framework: (typeof FRAMEWORKS)[number],
  options: Omit<RoundsOptions, 'warmup'> & { readonly clients: number },
): Promise<FrameworkResult> {
  const file = fileURLToPath(new URL('./in-process-child.ts', import.meta.url))
  const args = [framework.name, options.rounds, options.perRound, options.clients].map(String)
  const child = fork(file, args, {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    let result: FrameworkResult | undefined
    child.once('message', (message) => {
      const { bare, added } = message as { bare: number; added: [VariantName, number][] }
      result = { framework: framework.name, peer: framework.peer, bare, added: new Map(added) }
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      if (result !== undefined) resolve(result)
      else reject(new Error(`${framework.name}: the measuring process exited with ${code}`))
    })
  })
}
