import {
  isRulesLane,
  type LaneState,
  type ParamsLane,
  RATE_ALGORITHMS,
  WINDOW_ALGORITHMS,
} from './page-state.js'

/** The form of one lane; `onChange` gets the lane as the form now holds it. */
export function laneEditor(
  lane: LaneState,
  index: number,
  onChange: (lane: LaneState, redraw: boolean) => void,
  onRemove: () => void,
): HTMLElement {
  const box = element('fieldset', { class: 'lane', 'data-lane': String(index) })
  const label = input('label', lane.label, 'text')
  label.classList.add('lane-label')
  label.setAttribute('aria-label', 'Lane name')
  const remove = element('button', {
    type: 'button',
    class: 'remove',
    title: 'Remove this lane',
    'aria-label': `Remove lane ${index + 1}`,
  })
  remove.textContent = '×'
  remove.addEventListener('click', onRemove)
  box.append(label, remove)
  if (isRulesLane(lane)) {
    const text = element('textarea', {
      'data-field': 'rulesText',
      rows: '8',
      spellcheck: 'false',
      'aria-label': 'Rules file (YAML or JSON)',
    })
    text.value = lane.rulesText
    text.addEventListener('input', () =>
      onChange({ label: label.value, rulesText: text.value }, false),
    )
    label.addEventListener('input', () =>
      onChange({ label: label.value, rulesText: text.value }, false),
    )
    box.append(text)
  } else {
    const algorithm = element('select', { 'data-field': 'algorithm', 'aria-label': 'Algorithm' })
    for (const name of [...RATE_ALGORITHMS, ...WINDOW_ALGORITHMS]) {
      const option = element('option', { value: name })
      option.textContent = name
      algorithm.append(option)
    }
    algorithm.value = lane.algorithm
    const isRate = RATE_ALGORITHMS.includes(lane.algorithm)
    const fields = isRate
      ? [input('rate', lane.rate), input('period', lane.period, 'text'), input('burst', lane.burst)]
      : [input('limit', lane.limit), input('window', lane.window, 'text')]
    // A leaky queue's nginx `delay=`: how much of the burst is served at once.
    if (lane.algorithm === 'leaky_queue') fields.push(input('delay', lane.delay))
    const read = (): ParamsLane => {
      const value = (name: string) =>
        fields.find((f) => f.getAttribute('data-field') === name)?.value
      const number = (name: string) => {
        const text = value(name)
        return text === undefined || text === '' ? undefined : Number(text)
      }
      return isRate
        ? {
            label: label.value,
            algorithm: algorithm.value,
            rate: number('rate'),
            period: value('period'),
            burst: number('burst'),
            ...(algorithm.value === 'leaky_queue' ? { delay: number('delay') } : {}),
          }
        : {
            label: label.value,
            algorithm: algorithm.value,
            limit: number('limit'),
            window: value('window'),
          }
    }
    algorithm.addEventListener('change', () => {
      const next = algorithm.value
      const switched = RATE_ALGORITHMS.includes(next) !== isRate
      // Switching kind keeps the amount: 100 per minute as a rate or as a window.
      const changed: ParamsLane = !switched
        ? { ...read(), algorithm: next }
        : isRate
          ? { label: label.value, algorithm: next, limit: lane.burst, window: lane.period }
          : {
              label: label.value,
              algorithm: next,
              rate: lane.limit,
              period: lane.window,
              burst: lane.limit,
            }
      onChange(changed, switched)
    })
    label.addEventListener('input', () => onChange(read(), false))
    box.append(algorithm)
    for (const field of fields) {
      field.addEventListener('input', () => onChange(read(), false))
      const wrap = element('label', {})
      wrap.append(`${field.getAttribute('data-field')} `, field)
      box.append(wrap)
    }
  }
  box.append(element('div', { class: 'error', 'data-testid': 'lane-error' }))
  return box
}

function input(
  field: string,
  value: string | number | undefined,
  type = 'number',
): HTMLInputElement {
  const box = element('input', { type, 'data-field': field })
  box.value = value === undefined ? '' : String(value)
  return box
}

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string>,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value)
  return node
}
