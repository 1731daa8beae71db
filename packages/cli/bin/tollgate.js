#!/usr/bin/env node
// The built command; a file of its own so that the bin exists before the package is built.
import '../dist/bin.js'
