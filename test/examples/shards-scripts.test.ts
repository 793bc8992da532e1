import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { useTmpDirs } from './tmp-dirs.js'
import { type Contexts, interpolate } from './gh-expr.js'

// The shell of the sharded-sweep examples, run for real with bash: `srun` and `npx` are stand-ins
// on PATH that record what they were asked (srun starts its command once per task, with that
// task's SLURM_PROCID, as Slurm does). Nothing leaves the machine. The examples' structure is
// checked without processes in shards-examples.test.ts.

const ROOT = new URL('../../', import.meta.url)
const SLURM = fileURLToPath(new URL('examples/slurm-shards.sh', ROOT))

const tmp = useTmpDirs('servegate-shards-')

// One call per line: the task's SLURM_PROCID (or -), then the arguments, separated by a unit separator.
// `servegate run` writes its --out and the records file beside it, `merge` its --out, `report` its
// --markdown; FAKE_FAIL_PROCID makes that task's run fail.
const FAKE_NPX = `#!/usr/bin/env bash
{ printf '%s' "\${SLURM_PROCID:--}"; printf '\\037%s' "$@"; printf '\\n'; } >> "$FAKE_LOG"
if [ "$1 $2" = "servegate run" ] && [ "\${SLURM_PROCID:-}" = "\${FAKE_FAIL_PROCID:-none}" ]; then exit 3; fi
prev=''
for a in "$@"; do
  case "$prev" in
    --out)
      mkdir -p "$(dirname "$a")"; echo '{}' > "$a"
      if [ "$2" = run ]; then echo > "\${a%.json}.records.jsonl.gz"; fi ;;
    --markdown) echo '# report' > "$a" ;;
  esac
  prev="$a"
done
exit 0
`

// srun's options up to the command, then the command once per task (SLURM_NTASKS of them), in turn;
// its exit status is the worst task's.
const FAKE_SRUN = `#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$FAKE_SRUN_LOG"
while [ $# -gt 0 ]; do
  case "$1" in
    --*=*|--kill-on-bad-exit|--exclusive) shift ;;
    -*) shift 2 ;;
    *) break ;;
  esac
done
rc=0
for ((i = 0; i < SLURM_NTASKS; i++)); do
  SLURM_PROCID=$i SLURM_NODEID=$i "$@" || rc=$?
done
exit $rc
`

interface Call {
  procid: string
  args: string[]
}

function runSlurm(opts: { failProcid?: number } = {}) {
  const dir = tmp()
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'npx'), FAKE_NPX)
  writeFileSync(join(bin, 'srun'), FAKE_SRUN)
  chmodSync(join(bin, 'npx'), 0o755)
  chmodSync(join(bin, 'srun'), 0o755)
  const log = join(dir, 'npx.log')
  const srunLog = join(dir, 'srun.log')
  writeFileSync(log, '')
  writeFileSync(srunLog, '')
  const before = Date.now()
  const r = spawnSync('bash', [SLURM], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 20_000,
    env: {
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      HOME: dir,
      FAKE_LOG: log,
      FAKE_SRUN_LOG: srunLog,
      ...(opts.failProcid === undefined ? {} : { FAKE_FAIL_PROCID: String(opts.failProcid) }),
      // What sbatch sets for this script's #SBATCH lines.
      SLURM_JOB_ID: '4242',
      SLURM_SUBMIT_DIR: dir,
      SLURM_NNODES: '4',
      SLURM_NTASKS: '4',
      SLURM_NTASKS_PER_NODE: '1',
      SLURM_CPUS_PER_TASK: '16',
    },
  })
  const calls: Call[] = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [procid = '', ...args] = l.split('\x1f')
      return { procid, args }
    })
  return { code: r.status ?? -1, out: r.stdout + r.stderr, calls, dir, before, srun: readFileSync(srunLog, 'utf8') }
}
const flag = (args: string[], name: string) => args[args.indexOf(name) + 1]

describe('examples/slurm-shards.sh', () => {
  it('is a valid bash script (bash -n)', () => {
    const r = spawnSync('bash', ['-n', SLURM], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
  })

  it('runs one shard per task with its own SLURM_PROCID, every one with the same start two minutes ahead, then merges all of them', () => {
    const r = runSlurm()
    expect(r.code, r.out).toBe(0)
    const runs = r.calls.filter((c) => c.args[1] === 'run')
    expect(runs.map((c) => c.procid)).toEqual(['0', '1', '2', '3'])
    const out = join(r.dir, 'servegate-4242')
    for (const c of runs) {
      expect(c.args.slice(0, 2)).toEqual(['servegate', 'run'])
      expect(flag(c.args, '--shard')).toBe('SLURM_PROCID/4')
      expect(flag(c.args, '--out')).toBe(join(out, `shard-${c.procid}.json`))
      expect(flag(c.args, '--time-server')).toMatch(/\S/)
      expect(Number(flag(c.args, '--slot'))).toBeGreaterThan(0)
    }
    const starts = new Set(runs.map((c) => flag(c.args, '--start-at')))
    expect(starts.size).toBe(1)
    const startAt = [...starts][0]!
    expect(startAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    const lead = (Date.parse(startAt) - r.before) / 1000
    expect(lead).toBeGreaterThan(100)
    expect(lead).toBeLessThan(140)
    // After every shard: the merge of the four files (each with its records beside it), then the report.
    const rest = r.calls.slice(runs.length)
    expect(rest.map((c) => c.args.slice(0, 2).join(' '))).toEqual(['servegate merge', 'servegate report'])
    const merge = rest[0]!.args
    expect(merge.slice(2, 6)).toEqual([0, 1, 2, 3].map((i) => join(out, `shard-${i}.json`)))
    for (let i = 0; i < 4; i++) expect(existsSync(join(out, `shard-${i}.records.jsonl.gz`))).toBe(true)
    expect(flag(merge, '--out')).toBe(join(out, 'result.json'))
    expect(rest[1]!.args[2]).toBe(join(out, 'result.json'))
    // srun is told the CPUs per task, which it no longer inherits from sbatch.
    expect(r.srun).toMatch(/--cpus-per-task=16\b/)
  })

  it('stops before the merge when a shard fails', () => {
    const r = runSlurm({ failProcid: 2 })
    expect(r.code).not.toBe(0)
    expect(r.calls.filter((c) => c.args[1] === 'run')).toHaveLength(4)
    expect(r.calls.some((c) => c.args[1] === 'merge' || c.args[1] === 'report')).toBe(false)
  })

  it('refuses to run outside sbatch (no SLURM_JOB_ID) before it starts anything', () => {
    const dir = tmp()
    const r = spawnSync('bash', [SLURM], { cwd: dir, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: dir } })
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(/submit this script with sbatch/)
  })
})

interface Step {
  id?: string
  name?: string
  run?: string
  env?: Record<string, string>
}
interface Wf {
  env?: Record<string, string>
  jobs: Record<string, { steps?: Step[] }>
}

describe('examples/servegate-shards.yml: its run: scripts', () => {
  const wf = parse(readFileSync(new URL('examples/servegate-shards.yml', ROOT), 'utf8')) as Wf
  const find = (job: string, pick: (s: Step) => boolean): Step => {
    const s = wf.jobs[job]?.steps?.find(pick)
    if (!s?.run) throw new Error(`no such step in job ${job}`)
    return s
  }
  const bash = (script: string, cwd: string, env: Record<string, string>) =>
    spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd,
      encoding: 'utf8',
      timeout: 20_000,
      env: { PATH: process.env['PATH'] ?? '', HOME: cwd, ...env },
    })
  const fakeNpx = (dir: string) => {
    const bin = join(dir, 'bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'npx'), FAKE_NPX)
    chmodSync(join(bin, 'npx'), 0o755)
    const log = join(dir, 'npx.log')
    writeFileSync(log, '')
    return {
      env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, FAKE_LOG: log },
      calls: () =>
        readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\x1f').slice(1)),
    }
  }
  /** A step's env as GitHub hands it over: the workflow's, then the step's, each `${{ }}` evaluated. */
  const envOf = (step: Step, ctx: Contexts) => Object.fromEntries(Object.entries({ ...wf.env, ...step.env }).map(([k, v]) => [k, interpolate(String(v), ctx)]))

  it('plan: writes one start_at to GITHUB_OUTPUT, an ISO time two minutes ahead in UTC', () => {
    const dir = tmp()
    const out = join(dir, 'github_output')
    const summary = join(dir, 'summary')
    writeFileSync(out, '')
    const before = Date.now()
    const r = bash(find('plan', (s) => s.id === 'plan').run!, dir, { GITHUB_OUTPUT: out, GITHUB_STEP_SUMMARY: summary })
    expect(r.status, r.stderr).toBe(0)
    const lines = readFileSync(out, 'utf8').trim().split('\n')
    expect(lines).toHaveLength(1)
    const m = /^start_at=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/.exec(lines[0]!)
    expect(m, lines[0]).not.toBeNull()
    const lead = (Date.parse(m![1]!) - before) / 1000
    expect(lead).toBeGreaterThan(100)
    expect(lead).toBeLessThan(140)
  })

  it('shard: hands the base-url input to servegate as one argument, however it is spelled, with this shard of 4', () => {
    const dir = tmp()
    const npx = fakeNpx(dir)
    const hostile = 'http://vllm:8000"; touch pwned; echo "$(id)'
    const ctx: Contexts = {
      inputs: { 'base-url': hostile, sweep: 'full' },
      matrix: { shard: 2 },
      needs: { plan: { outputs: { start_at: '2026-12-07T10:00:00Z' } } },
      secrets: {},
      github: { run_attempt: '1' },
    }
    const step = find('shard', (s) => /servegate run/.test(s.run ?? ''))
    const r = bash(step.run!, dir, { ...envOf(step, ctx), ...npx.env })
    expect(r.status, r.stderr).toBe(0)
    const [call] = npx.calls()
    expect(call!.slice(0, 2)).toEqual(['servegate', 'run'])
    expect(flag(call!, '--base-url')).toBe(hostile)
    expect(flag(call!, '--shard')).toBe('2/4')
    expect(flag(call!, '--start-at')).toBe('2026-12-07T10:00:00Z')
    expect(flag(call!, '--out')).toBe('shard-2.json')
    expect(flag(call!, '--sweep')).toBe('full')
    expect(Number(flag(call!, '--slot'))).toBeGreaterThan(0)
    expect(existsSync(join(dir, 'pwned'))).toBe(false)
    expect(existsSync(join(dir, 'shard-2.records.jsonl.gz'))).toBe(true)
  })

  it('merge: merges every downloaded shard, reports the result and adds the report to the summary', () => {
    const dir = tmp()
    const npx = fakeNpx(dir)
    mkdirSync(join(dir, 'shards'))
    for (let i = 0; i < 4; i++) {
      writeFileSync(join(dir, 'shards', `shard-${i}.json`), '{}')
      writeFileSync(join(dir, 'shards', `shard-${i}.records.jsonl.gz`), '')
    }
    const summary = join(dir, 'summary')
    const r = bash(find('merge', (s) => /servegate merge/.test(s.run ?? '')).run!, dir, { ...npx.env, GITHUB_STEP_SUMMARY: summary })
    expect(r.status, r.stderr).toBe(0)
    const [merge, report] = npx.calls()
    expect(merge).toEqual(['servegate', 'merge', ...[0, 1, 2, 3].map((i) => `shards/shard-${i}.json`), '--out', 'result.json'])
    expect(report!.slice(0, 3)).toEqual(['servegate', 'report', 'result.json'])
    expect(readFileSync(summary, 'utf8')).toContain('# report')
  })
})
