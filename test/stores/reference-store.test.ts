// The reference store, the oracle the other stores are compared with, held to the same contract.
import { referenceStore } from '@tollgate/test-utils'
import { describeStore } from './support/store-suite.js'

describeStore('reference store', { create: referenceStore, compareWithReference: false })
