import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const dir = join(import.meta.dirname, '..', '..', 'src', 'formats')

describe('src/formats', () => {
  // Mappers to and from other tools' files are pure: they never talk to a server or run a sweep.
  it('imports neither the client nor the sweep', () => {
    const offending = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => `${f}: ${m[1]}`))
      .filter((line) => /\/(client|sweep)\//.test(line))
    expect(offending).toEqual([])
  })
})
