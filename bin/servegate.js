#!/usr/bin/env node
// The committed bundle keeps `npx servegate` working on a fresh clone after
// `npm ci`, with no build step.
import { main } from '../dist/cli.js'

await main(process.argv)
