/**
 * The playground: a workspace where any algorithms or a pasted rules file judge the same
 * arrivals side by side, its chart on the first screen, then the design documents' figures. Everything runs the real core in the
 * page (`@tollgate/core/simulate`); the page's whole state is in the URL's hash.
 */
import { chartTimeAt, timelineSvg } from '@tollgate/cli/svg'
import { SCENARIOS, scenarioNamed } from '@tollgate/core/simulate'
import { figureFacts } from './figures.js'
import { element, laneEditor } from './lane-editor.js'
import {
  decodeState,
  encodeState,
  type LaneState,
  type PageState,
  stateOfScenario,
} from './page-state.js'
import { type PageResult, runPage } from './run-lanes.js'
import './style.css'

const OPENING = 'minute-boundary'
/** The chart is drawn at the width it is shown (within these), so its text stays legible. */
const CHART_WIDTHS = { min: 320, max: 960 }
const chartWidth = () =>
  Math.round(
    Math.min(
      CHART_WIDTHS.max,
      Math.max(CHART_WIDTHS.min, byId('chart').clientWidth || CHART_WIDTHS.max),
    ),
  )
let drawnWidth: number = CHART_WIDTHS.max
let lastResult: PageResult | undefined
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

let state: PageState = decodeState(location.hash) ?? stateOfScenario(scenarioNamed(OPENING)!)

function showFigures(): void {
  const list = byId('figures')
  for (const figure of figureFacts()) {
    const card = element('article', { class: 'figure', 'data-figure': figure.name })
    const title = element('h3', {})
    title.textContent = figure.title
    const facts = element('ul', {})
    for (const fact of figure.facts) {
      const item = element('li', {})
      item.textContent = fact
      facts.append(item)
    }
    const open = element('button', { type: 'button' })
    open.textContent = 'Open in the workspace'
    open.addEventListener('click', () => load(stateOfScenario(scenarioNamed(figure.name)!)))
    card.append(title, facts, open)
    list.append(card)
  }
}

function load(next: PageState): void {
  state = next
  showControls()
  showLanes()
  update()
}

function showControls(): void {
  const select = byId<HTMLSelectElement>('scenario')
  select.value = state.scenario
  byId<HTMLTextAreaElement>('trace').value = state.trace
  byId<HTMLInputElement>('from').value = String(state.from)
  byId<HTMLInputElement>('until').value = String(state.until)
  byId<HTMLInputElement>('every').value = String(state.every)
}

function showLanes(): void {
  const box = byId('lanes')
  box.replaceChildren(
    ...state.lanes.map((lane, index) =>
      laneEditor(
        lane,
        index,
        (changed, redraw) => {
          state = { ...state, lanes: state.lanes.map((l, i) => (i === index ? changed : l)) }
          if (redraw) showLanes()
          update()
        },
        () => {
          state = { ...state, lanes: state.lanes.filter((_, i) => i !== index) }
          showLanes()
          update()
        },
      ),
    ),
  )
}

function update(): void {
  history.replaceState(null, '', encodeState(state))
  showResults(runPage(state))
}

function showResults(result: PageResult): void {
  byId('trace-error').textContent = result.traceError ?? ''
  const editors = byId('lanes').querySelectorAll<HTMLElement>('[data-testid="lane-error"]')
  const rows = byId('results').querySelector('tbody')!
  rows.replaceChildren()
  result.lanes.forEach((lane, index) => {
    const editor = editors[index]
    if (editor !== undefined) editor.textContent = lane.error ?? ''
    const row = element('tr', { 'data-lane': String(index) })
    const cells =
      lane.simulation === undefined
        ? [lane.label, '—', '—', 'invalid: see the lane']
        : summary(lane.label, lane.simulation)
    cells.forEach((text, i) => {
      const cell = element('td', i === 1 ? { 'data-testid': 'admitted' } : {})
      cell.textContent = text
      row.append(cell)
    })
    rows.append(row)
  })
  const drawn = result.lanes.flatMap((lane) =>
    lane.simulation === undefined ? [] : [{ label: lane.label, simulation: lane.simulation }],
  )
  const chart = byId('chart')
  drawnWidth = chartWidth()
  lastResult = result
  chart.innerHTML = timelineSvg(drawn, {
    from: state.from,
    until: state.until,
    width: drawnWidth,
  })
  // Read as one image, summed up by the table below it.
  const svg = chart.querySelector('svg')
  svg?.setAttribute('role', 'img')
  svg?.setAttribute(
    'aria-label',
    'Each lane over time: requests allowed and denied, and what remains',
  )
}

function summary(
  label: string,
  simulation: NonNullable<PageResult['lanes'][number]['simulation']>,
): string[] {
  const allowed = simulation.requests.filter((r) => r.allowed).length
  const firstDenied = simulation.requests.find((r) => !r.allowed)
  const last = simulation.states[simulation.states.length - 1]
  return [
    label,
    String(allowed),
    String(simulation.requests.length - allowed),
    [
      firstDenied === undefined ? 'none denied' : `first denied at ${firstDenied.at / 1000} s`,
      last === undefined ? '' : `${last.remaining} of ${last.limit} left at ${last.at / 1000} s`,
      ...simulation.warnings,
    ]
      .filter(Boolean)
      .join('; '),
  ]
}

function wire(): void {
  const select = byId<HTMLSelectElement>('scenario')
  for (const scenario of SCENARIOS) {
    const option = element('option', { value: scenario.name })
    option.textContent = scenario.title
    select.append(option)
  }
  select.addEventListener('change', () => load(stateOfScenario(scenarioNamed(select.value)!)))
  byId('trace').addEventListener('input', () => {
    state = { ...state, trace: byId<HTMLTextAreaElement>('trace').value }
    update()
  })
  for (const field of ['from', 'until', 'every'] as const) {
    byId(field).addEventListener('input', () => {
      state = { ...state, [field]: Number(byId<HTMLInputElement>(field).value) }
      update()
    })
  }
  const addLane = (lane: LaneState) => {
    state = { ...state, lanes: [...state.lanes, lane] }
    showLanes()
    update()
  }
  byId('add-lane').addEventListener('click', () =>
    addLane({ label: 'GCRA', algorithm: 'gcra', rate: 100, period: '60s', burst: 100 }),
  )
  byId('add-rules').addEventListener('click', () =>
    addLane({
      label: 'Rules file',
      rulesText:
        '- id: per-ip\n  match: { identity: ip }\n  algorithm: token_bucket\n  rate_per_s: 2\n  burst: 50\n',
    }),
  )
  // A click on the chart sends a burst at that time.
  byId('chart').addEventListener('click', (event) => {
    const svg = byId('chart').querySelector('svg')
    if (svg === null) return
    const box = svg.getBoundingClientRect()
    const px = ((event.clientX - box.left) / box.width) * drawnWidth
    sendBurst(chartTimeAt(px, { from: state.from, until: state.until, width: drawnWidth }))
  })
  byId('burst-send').addEventListener('click', () =>
    sendBurst(Number(byId<HTMLInputElement>('burst-at').value)),
  )
}

// A window resized across a width the chart was drawn for: drawn again, once per frame.
let resizing = false
window.addEventListener('resize', () => {
  if (resizing) return
  resizing = true
  requestAnimationFrame(() => {
    resizing = false
    if (lastResult !== undefined && chartWidth() !== drawnWidth) showResults(lastResult)
  })
})

function sendBurst(at: number): void {
  const count = byId<HTMLInputElement>('burst-count').value || '1'
  const every = byId<HTMLInputElement>('burst-every').value || '0'
  const trace = `${state.trace.trimEnd()}\n${at},${count},${every}`
  state = { ...state, trace }
  byId<HTMLTextAreaElement>('trace').value = trace
  update()
}

wire()
showFigures()
load(state)
