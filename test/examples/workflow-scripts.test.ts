import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { useTmpDirs } from './tmp-dirs.js'

// The shell steps of the example and of the release workflow, run for real with
// bash: `docker` and `curl` are stand-ins on PATH that record what they were
// asked; git runs against a local bare repository. Nothing leaves the machine.

const ROOT = new URL('../../', import.meta.url)
interface Step {
  id?: string
  name?: string
  run?: string
  env?: Record<string, string>
}
interface Wf {
  jobs: Record<string, { steps?: Step[] }>
}
const load = (rel: string) => parse(readFileSync(new URL(rel, ROOT), 'utf8')) as Wf
const step = (wf: Wf, job: string, pick: (s: Step) => boolean): string => {
  const s = wf.jobs[job]?.steps?.find(pick)
  if (!s?.run) throw new Error(`no such step in job ${job}`)
  return s.run
}

/** GitHub's GITHUB_OUTPUT format: `k=v` lines and `k<<DELIM` … `DELIM` blocks. */
function readOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const block = /^([^=<]+)<<(.+)$/.exec(line)
    if (block) {
      const end = lines.indexOf(block[2] as string, i + 1)
      if (end < 0) throw new Error(`unterminated ${block[1]}`)
      out[block[1] as string] = lines.slice(i + 1, end).join('\n')
      i = end
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1)
    }
  }
  return out
}

const tmp = useTmpDirs('servegate-wf-')

const FAKE_DOCKER = `#!/usr/bin/env bash
all="$*"
{ printf '%s\\n' "--- $1"; shift; printf '%s\\n' "$@"; } >> "$FAKE_LOG"
case "$all" in
  *"image inspect"*) printf '%s\\n' "$FAKE_DIGEST" ;;
  "inspect -f"*) printf '%s\\n' "$FAKE_RUNNING" ;;
  "logs"*) echo "engine log: CUDA out of memory" ;;
esac
exit 0
`

interface StartRun {
  code: number
  calls: string[][]
  outputs: Record<string, string>
  stdout: string
}

function startServer(opts: { args: string; digest: string; running: string; healthy: boolean }): StartRun {
  const dir = tmp()
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  mkdirSync(join(dir, 'serving'))
  writeFileSync(join(bin, 'docker'), FAKE_DOCKER)
  writeFileSync(join(bin, 'curl'), `#!/usr/bin/env bash\nexit ${opts.healthy ? 0 : 7}\n`)
  chmodSync(join(bin, 'docker'), 0o755)
  chmodSync(join(bin, 'curl'), 0o755)
  writeFileSync(join(dir, 'serving/image'), 'vllm/vllm-openai:v0.11.0\n')
  writeFileSync(join(dir, 'serving/args'), opts.args)
  const log = join(dir, 'docker.log')
  const out = join(dir, 'github_output')
  writeFileSync(log, '')
  writeFileSync(out, '')
  const script = step(load('examples/servegate-gate.yml'), 'gate', (s) => s.id === 'server')
  const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 20_000,
    env: {
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      HOME: dir,
      CONTAINER: 'servegate-under-test',
      SERVER_URL: 'http://127.0.0.1:8000',
      GITHUB_OUTPUT: out,
      FAKE_LOG: log,
      FAKE_DIGEST: opts.digest,
      FAKE_RUNNING: opts.running,
    },
  })
  const calls = readFileSync(log, 'utf8')
    .split('--- ')
    .filter(Boolean)
    .map((c) => c.replace(/\n$/, '').split('\n'))
  return { code: r.status ?? -1, calls, outputs: readOutputs(readFileSync(out, 'utf8')), stdout: r.stdout + r.stderr }
}

const DIGEST = 'vllm/vllm-openai@sha256:' + 'ab'.repeat(32)

describe('the example\'s "Start the server under test" step', () => {
  it('passes each line of serving/args as one argument, spaces and quotes intact', () => {
    const r = startServer({
      args: '--model\nzai-org/GLM-5.3-Flash\n# a comment\n\n--override-generation-config\n{"temperature": 0.0}\n--served-model-name\nmy model\n',
      digest: DIGEST,
      running: 'true',
      healthy: true,
    })
    expect(r.code, r.stdout).toBe(0)
    const run = r.calls.find((c) => c[0] === 'run') as string[]
    const tail = run.slice(run.indexOf('vllm/vllm-openai:v0.11.0') + 1)
    expect(tail).toEqual(['--model', 'zai-org/GLM-5.3-Flash', '--override-generation-config', '{"temperature": 0.0}', '--served-model-name', 'my model'])
  })

  it('removes a stale container before it runs a new one', () => {
    const r = startServer({ args: '--model\nm\n', digest: DIGEST, running: 'true', healthy: true })
    const verbs = r.calls.map((c) => c[0])
    expect(verbs.indexOf('rm')).toBeGreaterThanOrEqual(0)
    expect(verbs.indexOf('rm')).toBeLessThan(verbs.indexOf('run'))
    expect(r.calls[verbs.indexOf('rm')]).toEqual(['rm', '-f', 'servegate-under-test'])
  })

  it('outputs the digest, and a serve command that reads back as the same argument list', () => {
    const r = startServer({ args: '--model\nm\n--chat-template\n{{ x }}\n--name\na b\n', digest: DIGEST, running: 'true', healthy: true })
    expect(r.outputs['digest']).toBe(DIGEST)
    const cmd = r.outputs['command'] as string
    expect(cmd.startsWith('docker run ')).toBe(true)
    const back = execFileSync('bash', ['-c', `eval "set -- \${CMD#docker run }"; printf '%s\\n' "$@"`], { env: { CMD: cmd }, encoding: 'utf8' })
    expect(back.trimEnd().split('\n')).toEqual(['vllm/vllm-openai:v0.11.0', '--model', 'm', '--chat-template', '{{ x }}', '--name', 'a b'])
  })

  it('fails with a clear error, before docker run, for an image without a registry digest', () => {
    const r = startServer({ args: '--model\nm\n', digest: '', running: 'true', healthy: true })
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/::error::.*has no registry digest/)
    expect(r.calls.map((c) => c[0])).not.toContain('run')
  })

  it('is the same script in the refresh and watch jobs, so a fix to one reaches all, but for the read-only cache of the gate', () => {
    const wf = load('examples/servegate-gate.yml')
    const strip = (t: string) =>
      t
        .split('\n')
        .filter((l) => !/^\s*#/.test(l))
        .join('\n')
    const gate = strip(step(wf, 'gate', (s) => s.id === 'server'))
    // The one intended difference: the pull request's image gets the model cache read-only (and offline).
    expect(gate).toContain('/root/.cache/huggingface:ro"')
    const asTrusted = gate.replace(' -e HF_HUB_OFFLINE=1', '').replace(':ro"', '"')
    expect(strip(step(wf, 'refresh', (s) => s.id === 'server'))).toBe(asTrusted)
    expect(strip(step(wf, 'watch', (s) => s.id === 'server'))).toBe(asTrusted)
  })

  it('stops waiting as soon as the container has exited, and shows its log', () => {
    const started = Date.now()
    const r = startServer({ args: '--model\nm\n', digest: DIGEST, running: 'false', healthy: false })
    expect(r.code).toBe(1)
    expect(Date.now() - started).toBeLessThan(15_000) // the loop would take 20 minutes
    expect(r.stdout).toMatch(/::error::the server container exited before it became healthy/)
    expect(r.stdout).toContain('CUDA out of memory')
  })
})

describe("the release workflow's tag steps", () => {
  const wf = load('.github/workflows/release.yml')
  const readTag = step(wf, 'verify', (s) => s.id === 'tag')
  const moveMajor = step(wf, 'publish', (s) => s.name === 'Move the major tag')

  function repo(version: string) {
    const dir = tmp()
    const origin = join(dir, 'origin.git')
    const work = join(dir, 'work')
    const git = (args: string[], cwd = work) =>
      execFileSync('git', args, {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' },
      }).trim()
    execFileSync('git', ['init', '-q', '--bare', origin])
    execFileSync('git', ['init', '-q', work])
    writeFileSync(join(work, 'package.json'), JSON.stringify({ version }))
    git(['add', '.'])
    git(['commit', '-qm', 'one'])
    const first = git(['rev-parse', 'HEAD'])
    git(['remote', 'add', 'origin', origin])
    git(['push', '-q', 'origin', `${first}:refs/tags/v0`])
    git(['commit', '-q', '--allow-empty', '-m', 'two'])
    return { work, origin, git, first, sha: git(['rev-parse', 'HEAD']) }
  }
  const bash = (script: string, cwd: string, env: Record<string, string>) =>
    spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd, encoding: 'utf8', env: { ...process.env, ...env } })

  it('reads the major version of a release tag and refuses a tag that does not match package.json', () => {
    const { work } = repo('0.2.0')
    const out = join(work, '..', 'out')
    writeFileSync(out, '')
    expect(bash(readTag, work, { TAG: 'v0.2.0', GITHUB_OUTPUT: out }).status).toBe(0)
    expect(readOutputs(readFileSync(out, 'utf8'))).toEqual({ major: 'v0', prerelease: 'false' })
    const wrong = bash(readTag, work, { TAG: 'v0.3.0', GITHUB_OUTPUT: out })
    expect(wrong.status).toBe(1)
    expect(wrong.stdout).toMatch(/::error::tag v0\.3\.0 does not match package\.json version 0\.2\.0/)
    expect(bash(readTag, work, { TAG: 'v0.2', GITHUB_OUTPUT: out }).status).toBe(1)
  })

  it('marks a pre-release tag, so it does not move the major tag', () => {
    const { work } = repo('1.0.0-rc.1')
    const out = join(work, '..', 'out')
    writeFileSync(out, '')
    expect(bash(readTag, work, { TAG: 'v1.0.0-rc.1', GITHUB_OUTPUT: out }).status).toBe(0)
    expect(readOutputs(readFileSync(out, 'utf8'))).toEqual({ major: 'v1', prerelease: 'true' })
  })

  it('moves an existing major tag to the released commit', () => {
    const { work, origin, first, sha } = repo('0.2.0')
    expect(execFileSync('git', ['rev-parse', 'refs/tags/v0'], { cwd: origin, encoding: 'utf8' }).trim()).toBe(first)
    const summary = join(work, '..', 'summary')
    const r = bash(moveMajor, work, { MAJOR: 'v0', GITHUB_SHA: sha, GITHUB_REF_NAME: 'v0.2.0', GITHUB_STEP_SUMMARY: summary })
    expect(r.status, r.stderr).toBe(0)
    expect(execFileSync('git', ['rev-parse', 'refs/tags/v0'], { cwd: origin, encoding: 'utf8' }).trim()).toBe(sha)
  })
})
