import { execFileSync } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { collectEnv, withFinishedAt } from '../../src/env/collect.js'
import { createExec, type ExecFn } from '../../src/env/exec.js'
import { findHarnessRoot, harnessGitCommit, harnessVersion } from '../../src/env/harness.js'
import { queryServerInfo, revisionFromPath } from '../../src/env/server-info.js'
import { fakeNvidiaSmiScript, pathWith } from './fake-nvidia-smi.js'

const ROOT = 'http://127.0.0.1:1234'
const fakeFetch =
  (routes: Record<string, unknown>) =>
  async (url: string): Promise<unknown | null> =>
    routes[url] ?? null
const noExec: ExecFn = async () => null

describe('queryServerInfo', () => {
  it('reads engine and version from /version and the model card from /v1/models', async () => {
    const info = await queryServerInfo(
      fakeFetch({
        [`${ROOT}/version`]: { version: '0.4.2', engine: 'servegate-sim' },
        [`${ROOT}/v1/models`]: {
          data: [
            { id: 'a', root: 'a' },
            { id: 'sim/b', root: 'sim/b', revision: 'rev-7' },
          ],
        },
      }),
      ROOT,
      'sim/b',
    )
    expect(info).toEqual({ engine: { name: 'servegate-sim', version: '0.4.2' }, model: { id: 'sim/b', revision: 'rev-7', root: 'sim/b' } })
  })

  it('names the engine from owned_by only when it is an engine, and the revision from a snapshot path', async () => {
    const sha = 'a'.repeat(40)
    const info = await queryServerInfo(
      fakeFetch({
        [`${ROOT}/version`]: { version: '0.11.0' },
        [`${ROOT}/v1/models`]: { data: [{ id: 'glm', owned_by: 'vllm', root: `/hf/models--glm/snapshots/${sha}` }] },
      }),
      ROOT,
      null,
    )
    expect(info.engine).toEqual({ name: 'vllm', version: '0.11.0' })
    expect(info.model.revision).toBe(sha)
    const other = await queryServerInfo(fakeFetch({ [`${ROOT}/v1/models`]: { data: [{ id: 'gpt', owned_by: 'openai' }] } }), ROOT, null)
    expect(other.engine).toEqual({ name: 'unknown', version: 'unknown' })
    expect(other.model).toEqual({ id: 'gpt', revision: 'unknown', root: 'unknown' })
  })

  it('records unknown, not a guess, when the server answers nothing', async () => {
    expect(await queryServerInfo(fakeFetch({}), ROOT, 'm')).toEqual({
      engine: { name: 'unknown', version: 'unknown' },
      model: { id: 'unknown', revision: 'unknown', root: 'unknown' },
    })
  })

  it('finds no revision in a path without a snapshot hash', () => {
    expect(revisionFromPath('/models/glm')).toBeNull()
  })
})

describe('harness identity', () => {
  it("finds servegate's package.json and version", () => {
    const root = findHarnessRoot()
    expect(root).not.toBeNull()
    expect(harnessVersion(root)).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('reads the git commit of the servegate checkout', async () => {
    const root = findHarnessRoot()!
    let head: string
    try {
      head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
    } catch {
      return // not a git checkout here: nothing to compare with
    }
    expect(await harnessGitCommit(createExec(), root)).toBe(head)
  })

  it("says unknown when the enclosing repository is not servegate's own", async () => {
    const exec: ExecFn = async () => ({ stdout: `/some/project\n${'b'.repeat(40)}\n` })
    expect(await harnessGitCommit(exec, '/some/project/node_modules/servegate')).toBe('unknown')
    expect(await harnessGitCommit(noExec, '/x')).toBe('unknown')
  })
})

describe('collectEnv', () => {
  const smi = pathWith(fakeNvidiaSmiScript())
  afterAll(() => smi.cleanup())
  const deps = {
    baseUrl: ROOT,
    model: null,
    containerDigest: 'sha256:abc',
    serveCommand: null,
    startedAt: '2025-01-01T00:00:00.000Z',
    fetchJson: fakeFetch({
      [`${ROOT}/version`]: { version: '1.0.0', engine: 'servegate-sim' },
      [`${ROOT}/v1/models`]: { data: [{ id: 'sim', revision: 'r1' }] },
    }),
    harnessRoot: null,
    host: { hostname: 'h', platform: 'linux x64', cpus: 2 },
    machine: { hostname: 'h', machine_id_sha256: '5e8a1f0c3b2d4e6f', platform: 'linux x64', cpu_model: 'AMD EPYC 9654 96-Core Processor', cpus: 2 },
    nodeVersion: 'v20.0.0',
  }

  it('records engine, model revision, GPU figures from nvidia-smi and the definitions used', async () => {
    const env = await collectEnv({ ...deps, exec: smi.exec })
    expect(env).toMatchObject({
      engine: { name: 'servegate-sim', version: '1.0.0' },
      model: { id: 'sim', revision: 'r1' },
      gpu: { count: 2, driver_version: '550.54.15', cuda_version: '12.4' },
      container_digest: 'sha256:abc',
      serve_command: 'unknown',
      harness: { version: 'unknown', git_commit: 'unknown', node_version: 'v20.0.0' },
      host: { hostname: 'h', platform: 'linux x64', cpus: 2 },
      base_url: ROOT,
      started_at: '2025-01-01T00:00:00.000Z',
      finished_at: 'unknown',
    })
    // The server runs here: this machine served the model, its GPUs named by their UUIDs.
    expect(env.server_host).toEqual({ location: 'local', ...deps.machine, gpu_uuids: ['GPU-aaa', 'GPU-bbb'] })
    expect(Object.keys(env.definitions)).toEqual(expect.arrayContaining(['clock', 'ttft', 'itl', 'tpot', 'e2el', 'output_tokens']))
    expect(env.definitions.ttft).toMatch(/first .*non-empty content/)
  })

  it('says unknown for every GPU field without nvidia-smi', async () => {
    const env = await collectEnv({ ...deps, exec: noExec })
    expect(env.gpu).toEqual({ names: [], count: 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' })
    expect(withFinishedAt(env, '2025-01-01T00:01:00.000Z').finished_at).toBe('2025-01-01T00:01:00.000Z')
  })

  it("leaves GPU fields unknown when the server is on another host, even with this host's nvidia-smi answering", async () => {
    const env = await collectEnv({ ...deps, exec: smi.exec, gpuOnThisHost: false })
    expect(env.gpu).toEqual({ names: [], count: 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' })
    // Nor does it claim this host as the serving machine; the load's host is still recorded apart.
    expect(env.server_host).toMatchObject({ location: 'remote', hostname: 'unknown', machine_id_sha256: 'unknown', cpus: 'unknown', gpu_uuids: [] })
    expect(env.host.hostname).toBe('h')
  })
})
