import type { Decision, Outcome } from '@tollgate/core'
import type { PreparedCharge } from './prepare.js'
import type { ScriptReply } from './reply.js'
import { consumeScript, refundScript, type Script } from './scripts/index.js'
import { slotOfTag } from './slot.js'

/**
 * Runs `script` over the charges at `indices`, with ARGV[1] = `now` and ARGV[3] = `extra`; the
 * charges in `free` are sent at cost 0.
 */
export type RunScript = (
  script: Script,
  indices: readonly number[],
  now: number,
  extra: string,
  free?: ReadonlySet<number>,
) => Promise<ScriptReply>

/** The indices of the charges, grouped by Redis Cluster slot, in order of first appearance. */
export function groupBySlot(prepared: readonly PreparedCharge[]): number[][] {
  const groups = new Map<number, number[]>()
  for (let i = 0; i < prepared.length; i++) {
    const slot = slotOfTag(prepared[i]!.tag)
    const group = groups.get(slot)
    if (group === undefined) groups.set(slot, [i])
    else group.push(i)
  }
  return [...groups.values()]
}

/**
 * A request whose keys span Redis Cluster slots, which no single script may touch together.
 * Each slot group is decided atomically by its own script call; across groups the request is
 * made all-or-nothing by compensation, which can only err on the side of denying:
 *
 * 1. With the server's clock, the first group runs alone and its time is passed to the others as
 *    the caller's time, so that the whole request is decided at one instant (and a later refund
 *    finds sliding-log entries by that time). If it denies, the others run as a dry run.
 * 2. The remaining groups run in parallel.
 * 3. If any group denied, each group that wrote its charges gets them back through the refund
 *    script, which also reports them at cost 0 (what is left), as a denied request must.
 *
 * Between 2 and 3 other requests may see the charges of a request that ends up denied, and be
 * denied themselves: the window is one round trip, and it can only make the limiter stricter,
 * never admit more than a limit. A refund that fails leaves the charges in place (stricter too).
 */
export async function consumeAcrossSlots(
  run: RunScript,
  groups: readonly (readonly number[])[],
  count: number,
  callerNow: number | undefined,
): Promise<Outcome> {
  const replies: ScriptReply[] = []
  let at = callerNow ?? -1
  let rest = groups
  let denied = false
  if (callerNow === undefined) {
    const first = await run(consumeScript, groups[0]!, -1, '0')
    replies.push(first)
    at = first.at
    denied = !first.committed
    rest = groups.slice(1)
  }
  const flag = denied ? '1' : '0'
  replies.push(...(await Promise.all(rest.map((group) => run(consumeScript, group, at, flag)))))
  denied = denied || replies.some((reply) => !reply.committed)

  const decisions: Decision[] = new Array(count)
  const deniedOnCommit = new Set<number>()
  groups.forEach((group, g) => {
    group.forEach((index, j) => {
      decisions[index] = replies[g]!.decisions[j]!
      if (replies[g]!.deniedOnCommit[j]) deniedOnCommit.add(index)
    })
  })
  if (denied) await giveBack(run, groups, replies, decisions, deniedOnCommit, at)
  return { decisions, at }
}

async function giveBack(
  run: RunScript,
  groups: readonly (readonly number[])[],
  replies: readonly ScriptReply[],
  decisions: Decision[],
  deniedOnCommit: ReadonlySet<number>,
  at: number,
): Promise<void> {
  const refunds = groups.map(async (group, g) => {
    if (!replies[g]!.committed) return
    // Allowed charges were written and are given back; a charge denied only on commit wrote
    // nothing and is just reported (cost 0); one denied in the dry run (a shadow charge) keeps
    // its denial.
    const passed = group.filter((index) => decisions[index]!.allowed || deniedOnCommit.has(index))
    if (passed.length === 0) return
    try {
      const refunded = await run(refundScript, passed, at, String(at), deniedOnCommit)
      passed.forEach((index, j) => {
        decisions[index] = refunded.decisions[j]!
      })
    } catch {
      // The charges stay counted: stricter than intended until they age out, never looser.
    }
  })
  await Promise.all(refunds)
}
