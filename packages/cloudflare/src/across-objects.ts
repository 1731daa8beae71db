import type { Charge, Decision, Outcome } from '@tollgate/core/store'
import type { SendToObject } from './durable-object-store.js'
import type { WireCharge } from './wire.js'

/**
 * Decides a request whose charges fall on several keys, so several objects: each decides its
 * key's charges at once (one subrequest per object). When one denies an enforcing charge, the
 * objects that admitted theirs are asked to give them back and say what is left, so a denied
 * request ends up taking nothing, as the `Store` contract asks. Between the two, those units
 * are held for a few ms: another request may then be denied for them, never admitted beyond a
 * limit. A window that rolls over in between keeps what it took (a refund gives back only
 * what still counts). If an object cannot be reached, the others' charges are given back as
 * far as they can be and the call fails with the first error.
 */
export async function consumeAcross(
  groups: ReadonlyMap<string, readonly number[]>,
  charges: readonly Charge[],
  wire: readonly WireCharge[],
  time: { now?: number },
  send: SendToObject,
): Promise<Outcome> {
  const parts = [...groups]
  const answers = await Promise.allSettled(
    parts.map(([key, indices]) =>
      send(key, { op: 'consume', charges: indices.map((i) => wire[i]!), ...time }),
    ),
  )
  const decisions: Decision[] = new Array(charges.length)
  /** Each part's time, and whether it took its charges (no enforcing denial in it). */
  const taken: boolean[] = []
  let failure: { reason: unknown } | undefined
  let denied = false
  for (const [p, answer] of answers.entries()) {
    const indices = parts[p]![1]
    if (answer.status === 'rejected') {
      failure ??= { reason: answer.reason }
      taken.push(false)
      continue
    }
    let took = true
    for (const [j, i] of indices.entries()) {
      const decision = answer.value.decisions[j]!
      decisions[i] = decision
      if (!decision.allowed && !charges[i]!.shadow) took = false
    }
    if (!took) denied = true
    taken.push(took)
  }
  const first = answers.find((a) => a.status === 'fulfilled')
  if (failure === undefined && !denied) return { decisions, at: first!.value.at }
  await Promise.all(
    parts.map(async ([key, indices], p) => {
      const answer = answers[p]!
      if (!taken[p] || answer.status !== 'fulfilled') return
      // Only what it wrote is given back: its allowed charges (a denied shadow wrote nothing).
      const given = indices.filter((i) => decisions[i]!.allowed)
      const { at } = answer.value
      const request = { op: 'refund', charges: given.map((i) => wire[i]!), chargedAt: at } as const
      const undo = send(key, { ...request, look: true, ...time })
      if (failure !== undefined) return undo.then(noop, noop)
      const { decisions: left } = await undo
      for (const [j, i] of given.entries()) decisions[i] = left[j]!
    }),
  )
  if (failure !== undefined) throw failure.reason
  return { decisions, at: first!.value.at }
}

function noop(): void {}
