import { Session } from 'node:inspector/promises'

type ProfileNode = {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: ProfileNode[]
}

/**
 * What `run` allocates, by function and line: V8's sampling heap profiler over the whole run,
 * every sampled allocation kept (also those the next scavenge frees). Bytes per site, largest
 * first, each divided by `count` (the calls `run` makes), and their total the same way.
 */
export async function allocationSites(
  run: () => Promise<void>,
  count: number,
  samplingInterval = 64,
): Promise<{ perCall: number; sites: [site: string, perCall: number][] }> {
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.startSampling', {
    samplingInterval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  await run()
  const { profile } = await session.post('HeapProfiler.stopSampling')
  session.disconnect()
  // selfSize is already scaled up from the samples to an estimate of every allocation.
  const bySite = new Map<string, number>()
  const walk = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame
    const where = url.replace(/^.*?\/(packages|benchmarks|node_modules)\//, '$1/')
    const site = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
    for (const child of node.children) walk(child)
  }
  walk(profile.head as ProfileNode)
  const total = [...bySite.values()].reduce((a, b) => a + b, 0)
  const sites = [...bySite]
    .sort((a, b) => b[1] - a[1])
    .map(([site, bytes]): [string, number] => [site, bytes / count])
  return { perCall: total / count, sites }
}
