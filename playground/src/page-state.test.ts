import { parseTrace, SCENARIOS } from '@tollgate/core/simulate'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeState, encodeState, stateOfScenario, traceText } from './page-state.js'
import { runPage } from './run-lanes.js'

describe('the page state', () => {
  it('writes any arrival times as a CSV trace that reads back the same', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 80 }), (times) => {
        const arrivals = [...times].sort((a, b) => a - b).map((at) => ({ at }))
        expect(parseTrace(traceText(arrivals), 'csv')).toEqual(arrivals)
      }),
    )
  })

  it('writes a steady run as one row', () => {
    const minute = SCENARIOS.find((s) => s.name === 'minute-boundary')!
    expect(traceText(minute.arrivals)).toBe('at_ms,count,every_ms\n50000,200,100')
  })

  it('survives the URL, and a hash that is not a state is ignored', () => {
    for (const scenario of SCENARIOS) {
      const state = stateOfScenario(scenario)
      expect(decodeState(encodeState(state))).toEqual(state)
    }
    expect(decodeState('#state=%7Bnot json')).toBeUndefined()
    expect(decodeState('#state=%7B%7D')).toBeUndefined()
    expect(decodeState('')).toBeUndefined()
  })

  it('each scenario opened in the workspace gives what the scenario’s own lanes give', () => {
    const result = runPage(stateOfScenario(SCENARIOS.find((s) => s.name === 'minute-boundary')!))
    expect(
      result.lanes.map((lane) => lane.simulation!.requests.filter((r) => r.allowed).length),
    ).toEqual([200, 100, 116, 133])
  })

  it('a pasted rules file is validated as at start-up; a bad trace names its line', () => {
    const state = stateOfScenario(SCENARIOS[0]!)
    const pasted = runPage({
      ...state,
      lanes: [{ label: 'file', rulesText: '- id: x\n  algorithm: gcra\n' }],
    })
    expect(pasted.lanes[0]!.error).toMatch(/^\[tollgate\] 3 problems:\n {2}rule "x": match: /)
    const json = runPage({
      ...state,
      lanes: [
        {
          label: 'file',
          rulesText:
            '[{"id":"x","match":{"identity":"ip"},"algorithm":"gcra","rate_per_s":10,"burst":20}]',
        },
      ],
    })
    expect(json.lanes[0]!.simulation!.requests.filter((r) => r.allowed).length).toBe(26)
    expect(runPage({ ...state, trace: 'at_ms\nsoon' }).traceError).toBe(
      'line 2: at_ms: expected a number, got "soon"',
    )
  })
})
