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

/** In-process, one request in flight: every variant of one framework, interleaved. */
export async function measureFramework(
  framework: (typeof FRAMEWORKS)[number],
  options: RoundsOptions,
): Promise<FrameworkResult> {
  const variants = VARIANTS.map((name) => ({ name, send: framework.sender(name) as Send }))
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
