import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfigText } from '../../src/config/load.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { UsageError } from '../../src/errors.js'
import { allowedByDefault, childEnv, CHILD_ENV_NAMES, CHILD_ENV_PREFIXES } from '../../src/config/child-env.js'
import { startServer } from '../../src/serve/index.js'

const PARENT = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/runner',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  CUDA_VISIBLE_DEVICES: '0,1',
  NCCL_DEBUG: 'INFO',
  HF_HOME: '/models/hf',
  VLLM_LOGGING_LEVEL: 'DEBUG',
  VLLM_API_KEY: 'vllm-key-0123456789',
  NCCL_AUTH_TOKEN: 'nccl-0123456789',
  GITHUB_TOKEN: 'ghs_0123456789abcdefghijABCDEFGHIJ',
  ACTIONS_RUNTIME_TOKEN: 'runtime-0123456789',
  'INPUT_GITHUB-TOKEN': 'ghs_0123456789abcdefghijABCDEFGHIJ',
  OPENAI_API_KEY: 'sk-0123456789abcdef',
  HF_TOKEN: 'hf_0123456789abcdefXYZ',
  MY_SETTING: 'x',
}

describe('childEnv', () => {
  it('passes the allow-list and nothing else', () => {
    expect(childEnv(PARENT)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/runner',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      CUDA_VISIBLE_DEVICES: '0,1',
      NCCL_DEBUG: 'INFO',
      HF_HOME: '/models/hf',
      VLLM_LOGGING_LEVEL: 'DEBUG',
    })
  })

  it('never passes a name with a secret word, even under an allowed prefix', () => {
    for (const name of ['VLLM_API_KEY', 'NCCL_AUTH_TOKEN', 'CUDA_SECRET', 'NVIDIA_PASSWORD', 'SGLANG_TOKEN']) expect(allowedByDefault(name)).toBe(false)
    for (const name of ['VLLM_MAX_TOKENS_X', 'NCCL_IB_HCA', 'LC_CTYPE', 'TZ']) expect(allowedByDefault(name)).toBe(true)
  })

  it("adds the names server.env lists, but never the runner's own", () => {
    const env = childEnv(PARENT, ['HF_TOKEN', 'VLLM_API_KEY', 'MY_SETTING', 'GITHUB_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'INPUT_GITHUB-TOKEN', 'NOT_SET'])
    expect(env['HF_TOKEN']).toBe(PARENT.HF_TOKEN)
    expect(env['VLLM_API_KEY']).toBe(PARENT.VLLM_API_KEY)
    expect(env['MY_SETTING']).toBe('x')
    for (const name of ['GITHUB_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'INPUT_GITHUB-TOKEN', 'OPENAI_API_KEY', 'NOT_SET']) expect(env).not.toHaveProperty(name)
  })

  it('sets what servegate chooses for a side on top of the allow-list', () => {
    expect(childEnv(PARENT, [], { CUDA_VISIBLE_DEVICES: '2' })['CUDA_VISIBLE_DEVICES']).toBe('2')
  })

  it('lists names and prefixes with no secret word in them', () => {
    for (const n of [...CHILD_ENV_NAMES, ...CHILD_ENV_PREFIXES]) expect(n).not.toMatch(/(^|_)(TOKEN|KEY|SECRET|PASSWORD|AUTH)(_|$)/)
  })
})

describe('server.env in the config', () => {
  it('reaches the serve settings', () => {
    const file = parseConfigText('server:\n  command: "vllm serve m --port {port}"\n  env: [HF_TOKEN, VLLM_API_KEY]\n', 'servegate.yml')
    const cfg = resolveConfig({ file, filePath: 'servegate.yml', flags: {}, env: {} })
    expect(cfg.serve?.env).toEqual(['HF_TOKEN', 'VLLM_API_KEY'])
  })

  it.each(['GITHUB_TOKEN', 'ACTIONS_RUNTIME_TOKEN', 'INPUT_GITHUB_TOKEN', 'RUNNER_TEMP'])('refuses %s in one line naming the file and the field', (name) => {
    let err: unknown
    try {
      parseConfigText(`server:\n  env: [HF_TOKEN, ${name}]\n`, 'servegate.yml')
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(UsageError)
    const msg = (err as UsageError).message
    expect(msg).toContain('servegate.yml')
    expect(msg).toContain('server.env')
    expect(msg).toContain(name)
    expect(msg).toMatch(/never passed to a serve command/)
  })

  it('refuses a value that is not a variable name', () => {
    expect(() => parseConfigText('server:\n  env: ["HF_TOKEN=abc"]\n', 'servegate.yml')).toThrow(/server\.env.*NAMES/)
  })
})

// A real serve command that dumps its environment: only allow-listed names, server.env's, and what sh adds.
describe('the environment a serve command sees', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-childenv-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('holds no token and no variable the allow-list does not name, in the command and its stop command', async () => {
    const dump = join(dir, 'serve.env')
    const stopDump = join(dir, 'stop.env')
    const server = `require('http').createServer((q, r) => r.end('{}')).listen(Number(process.argv[1]), '127.0.0.1')`
    const handle = await startServer({
      command: `env > ${dump}; exec ${process.execPath} -e "${server}" {port}`,
      baseUrl: null,
      readyTimeoutMs: 20_000,
      // The stop command only dumps its env; the group is then killed after this grace.
      stopTimeoutMs: 1_000,
      stopCommand: `env > ${stopDump}`,
      logPath: join(dir, 'server.log'),
      apiKey: null,
      secrets: [],
      log: () => undefined,
      parentEnv: { ...PARENT, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      passEnv: ['HF_TOKEN'],
      extraEnv: { CUDA_VISIBLE_DEVICES: '3' },
    })
    await handle.stop()
    for (const file of [dump, stopDump]) {
      const text = readFileSync(file, 'utf8')
      const vars = Object.fromEntries(
        text
          .trim()
          .split('\n')
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      )
      // What the shell itself sets, beside what servegate passed.
      const shell = new Set(['PWD', 'SHLVL', '_', 'OLDPWD'])
      for (const name of Object.keys(vars)) expect(allowedByDefault(name) || name === 'HF_TOKEN' || shell.has(name), `${file}: ${name}`).toBe(true)
      expect(vars['HF_TOKEN']).toBe(PARENT.HF_TOKEN)
      expect(vars['CUDA_VISIBLE_DEVICES']).toBe('3')
      for (const secret of [PARENT.GITHUB_TOKEN, PARENT.ACTIONS_RUNTIME_TOKEN, PARENT.OPENAI_API_KEY, PARENT.VLLM_API_KEY, PARENT.NCCL_AUTH_TOKEN])
        expect(text).not.toContain(secret)
    }
  })
})
