/**
 * One framework's in-process measurement, in a process of its own (forked by in-process.ts):
 * what another framework's run left in the heap (old-generation objects, compiled code) does
 * not weigh on it. Usage: in-process-child.ts <framework name> <rounds> <requests per round>
 * <clients>
 */
import { FRAMEWORKS, measureFramework } from './in-process.js'

const [name, rounds, perRound, clients = '1'] = process.argv.slice(2)
const framework = FRAMEWORKS.find((f) => f.name === name)
if (framework === undefined) throw new Error(`unknown framework: ${name}`)
const result = await measureFramework(framework, {
  warmup: 5000,
  rounds: Number(rounds),
  perRound: Number(perRound),
  clients: Number(clients),
})
process.send!({ bare: result.bare, added: [...result.added] })
process.disconnect()
