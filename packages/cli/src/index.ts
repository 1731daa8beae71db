/**
 * `@tollgate/cli`: the `tollgate` command (`check`, `simulate`), and what it is built from for
 * other tools: the rules table and the timeline as text and SVG.
 * @module @tollgate/cli
 */
export { type CliIo, EXIT, runCli } from './cli.js'
export { type RuleFacts, ruleFacts, rulesTableRows } from './rules-table.js'
export { type ChartLane, type ChartOptions, timelineSvg } from './svg.js'
export { timelineLines } from './timeline.js'
