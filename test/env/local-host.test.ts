import { createHash } from 'node:crypto'
import { cpus, hostname } from 'node:os'
import { describe, expect, it } from 'vitest'
import { isServerOnThisHost, localMachine, machineIdHash, serverHostOf } from '../../src/env/local-host.js'

const host = { name: 'gpu-1', addresses: ['10.0.0.7', 'fe80::1'] }

describe('isServerOnThisHost', () => {
  it.each([
    ['http://127.0.0.1:8000', true],
    ['http://127.1.2.3:8000', true],
    ['http://localhost:8000/v1', true],
    ['http://[::1]:8000', true],
    ['http://0.0.0.0:8000', true],
    ['http://gpu-1:8000', true],
    ['http://gpu-1.lab.example:8000', true],
    ['http://10.0.0.7:8000', true],
    ['http://[fe80::1]:8000', true],
    ['http://10.0.0.8:8000', false],
    ['http://gpu-2.lab.example:8000', false],
    ['https://api.example.com', false],
    ['not a url', false],
  ])('%s → %s', (url, expected) => {
    expect(isServerOnThisHost(url, host)).toBe(expected)
  })
})

describe('the serving machine identity', () => {
  const ID = '4c4c4544004d3510804bb4c04f4b4a31'

  it('records a hash of the machine id, never the id itself, and unknown for none', () => {
    const hash = machineIdHash(`${ID}\n`)
    expect(hash).toBe(createHash('sha256').update(ID).digest('hex').slice(0, 16))
    expect(hash).not.toContain(ID.slice(0, 8))
    expect(machineIdHash('')).toBe('unknown')
    expect(machineIdHash(null)).toBe('unknown')
  })

  it('reads /etc/machine-id, else the D-Bus copy, else says unknown', () => {
    const files = (map: Record<string, string>) => (path: string) => {
      if (path in map) return map[path]!
      throw new Error(`ENOENT: ${path}`)
    }
    expect(localMachine(files({ '/etc/machine-id': `${ID}\n` })).machine_id_sha256).toBe(machineIdHash(ID))
    expect(localMachine(files({ '/var/lib/dbus/machine-id': ID })).machine_id_sha256).toBe(machineIdHash(ID))
    const none = localMachine(files({}))
    expect(none.machine_id_sha256).toBe('unknown')
    expect(none.hostname).toBe(hostname())
    expect(none.cpus).toBe(cpus().length)
    expect(none.cpu_model).toBe(cpus()[0]!.model.trim())
  })

  it("claims no fact of a remote server's machine, and this host's all of a local one's", () => {
    const here = localMachine(() => ID)
    expect(serverHostOf(false, here, ['GPU-0a3c9e2f'])).toEqual({
      location: 'remote',
      hostname: 'unknown',
      machine_id_sha256: 'unknown',
      platform: 'unknown',
      cpu_model: 'unknown',
      cpus: 'unknown',
      gpu_uuids: [],
    })
    expect(serverHostOf(true, here, ['GPU-0a3c9e2f'])).toEqual({ location: 'local', ...here, gpu_uuids: ['GPU-0a3c9e2f'] })
  })
})
