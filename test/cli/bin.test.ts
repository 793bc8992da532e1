import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HARNESS_VERSION } from '../../src/version.js'

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> }

describe('the servegate executable', () => {
  it('records the same version in results as package.json declares', () => {
    expect(HARNESS_VERSION).toBe(pkg.version)
  })

  it('runs from the committed bundle that npx uses on a fresh clone', () => {
    const out = execFileSync(process.execPath, [join(root, pkg.bin.servegate!), '--version'], { encoding: 'utf8' })
    expect(out.trim()).toBe(pkg.version)
  })

  it('lists every command in its help', () => {
    const out = execFileSync(process.execPath, [join(root, pkg.bin.servegate!), '--help'], { encoding: 'utf8' })
    for (const cmd of ['run', 'sim', 'compare', 'baseline', 'report']) expect(out).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'))
  })
})
