import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { writeFileAtomic } from '../../src/store/atomic-write.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-atomic-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('writeFileAtomic', () => {
  it('creates missing parent directories and writes the text', async () => {
    const path = join(dir, 'a', 'b', 'file.json')
    await writeFileAtomic(path, '{"x":1}\n')
    expect(await readFile(path, 'utf8')).toBe('{"x":1}\n')
  })

  it('replaces an existing file and leaves no temp file behind', async () => {
    const path = join(dir, 'file.json')
    await writeFile(path, 'old')
    await writeFileAtomic(path, 'new')
    expect(await readFile(path, 'utf8')).toBe('new')
    expect(await readdir(dir)).toEqual(['file.json'])
  })

  it('keeps the old content and cleans up when the rename cannot happen', async () => {
    // The target is a non-empty directory: the temp file is written, the rename fails.
    const path = join(dir, 'target')
    await mkdir(path)
    await writeFile(join(path, 'inside'), 'keep')
    await expect(writeFileAtomic(path, 'new')).rejects.toThrow()
    expect((await readdir(dir)).sort()).toEqual(['target'])
    expect(await readFile(join(path, 'inside'), 'utf8')).toBe('keep')
  })

  it('survives concurrent writers: the file ends as one complete version', async () => {
    const path = join(dir, 'race.json')
    const versions = Array.from({ length: 8 }, (_, i) => JSON.stringify({ v: i, pad: 'x'.repeat(50_000) }))
    await Promise.all(versions.map((v) => writeFileAtomic(path, v)))
    expect(versions).toContain(await readFile(path, 'utf8'))
    expect(await readdir(dir)).toEqual(['race.json'])
  })
})
