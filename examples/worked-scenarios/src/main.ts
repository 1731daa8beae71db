import { workedScenarios } from './scenarios.js'

for (const line of workedScenarios()) console.log(line)
