import type { Decision, Outcome } from '@tollgate/core/store'
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
export function groupBySlot(prepared: readonly Pick<PreparedCharge, 'tag'>[]): number[][] {
  const groups = new Map<number, number[]>()
  for (let i = 0; i < prepared.length; i++) {
    const slot = slotOfTag(prepared[i]!.tag)
    const group = groups.get(slot)
    if (group === undefined) groups.set(slot, [i])
    else group.push(i)
  }
  return [...groups.values()]
}

/** ARGV[3] of a consume call: no denial yet; reply the time each charge was recorded at. */
const RECORD_TIMES = '2'

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
 *    script, which also reports them at cost 0 (what is left), as a denied request must. Each
 *    charge is given back at the time its slot recorded it (step 1 and 2 replies carry it), not
 *    the request's: a window algorithm holds a charge at its state's own time (the stored
 *    window, the newest log entry) when that is ahead of the request's, as it is when another
 *    caller's clock runs ahead or another process charged the slot at a later server time.
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
    const first = await run(consumeScript, groups[0]!, -1, RECORD_TIMES)
    replies.push(first)
    at = first.at
    denied = !first.committed
    rest = groups.slice(1)
  }
  const flag = denied ? '1' : RECORD_TIMES
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
    const reply = replies[g]!
    const passed: number[] = []
    const times: number[] = []
    group.forEach((index, j) => {
      if (!decisions[index]!.allowed && !deniedOnCommit.has(index)) return
      passed.push(index)
      times.push(reply.recordedAt?.[j] ?? at)
    })
    if (passed.length === 0) return
    try {
      const refunded = await run(refundScript, passed, at, times.join(' '), deniedOnCommit)
      passed.forEach((index, j) => {
        decisions[index] = refunded.decisions[j]!
      })
    } catch {
      // The charges stay counted: stricter than intended until they age out, never looser.
    }
  })
  await Promise.all(refunds)
}
