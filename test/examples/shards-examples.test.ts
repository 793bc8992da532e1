import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { type Contexts, evaluateIf, globMatches, interpolate } from './gh-expr.js'
import { runnerLabels, type RunsOn } from './runner.js'

// The three examples that launch a sharded sweep (servegate run --shard I/N on N load hosts, one
// --start-at and --slot for all, then servegate merge): a Kubernetes Indexed Job, a Slurm batch
// script and a GitHub Actions matrix. No cluster here: each is parsed (YAML, or the script's lines
// and shell words) and its hand-overs checked: N the same everywhere, one start time computed
// once, every shard's two files reaching the merge, the merge only after every shard.
// test/examples/shards-scripts.test.ts runs the scripts themselves with bash.

const ROOT = new URL('../../', import.meta.url)
const read = (rel: string) => readFileSync(new URL(rel, ROOT), 'utf8')

// ---------------------------------------------------------------- shell words

/** A script's logical lines: backslash-newline continuations joined, with the index of the line each starts on. */
function logicalLines(script: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = []
  const lines = script.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const start = i
    let text = lines[i] as string
    while (text.endsWith('\\') && i + 1 < lines.length) text = text.slice(0, -1) + ' ' + (lines[++i] as string).trim()
    out.push({ text, line: start })
  }
  return out
}

interface Word {
  /** The word with its quotes removed; `$NAME` stays as written. */
  text: string
  /** Whether a `$` in it stands outside single quotes, where this shell expands it. */
  expands: boolean
}

/** POSIX-shell words of one logical line (quotes, backslashes; stops at an unquoted #). Enough for these examples. */
function shellWords(line: string): Word[] {
  const words: Word[] = []
  let cur: Word | null = null
  const add = (s: string, expands: boolean) => {
    cur ??= { text: '', expands: false }
    cur.text += s
    if (expands && s.includes('$')) cur.expands = true
  }
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (/\s/.test(c)) {
      if (cur) words.push(cur)
      cur = null
    } else if (c === '#' && cur === null) break
    else if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unterminated ' in ${line}`)
      add(line.slice(i + 1, end), false)
      i = end
    } else if (c === '"') {
      let s = ''
      for (i++; i < line.length && line[i] !== '"'; i++) s += line[i] === '\\' ? (line[++i] ?? '') : line[i]
      add(s, true)
    } else if (c === '\\') add(line[++i] ?? '', false)
    else add(c, true)
  }
  if (cur) words.push(cur)
  return words
}

/** The value of `--name V` or `--name=V` in a word list. */
function flag(words: string[], name: string): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string
    if (w === name) return words[i + 1]
    if (w.startsWith(`${name}=`)) return w.slice(name.length + 1)
  }
  return undefined
}
const flagWords = (words: Word[]) => words.map((w) => w.text)

/** The words after `npx servegate SUB` in a script (the first such command), or null. */
function servegate(script: string, sub: string): { words: Word[]; line: number } | null {
  for (const l of logicalLines(script)) {
    const words = shellWords(l.text)
    for (let i = 0; i + 2 < words.length; i++) {
      if (words[i]!.text === 'npx' && words[i + 1]!.text === 'servegate' && words[i + 2]!.text === sub) return { words: words.slice(i + 3), line: l.line }
    }
  }
  return null
}

/** The inputs of a `merge` command line: the words before its first flag. */
const mergeInputs = (words: string[]) =>
  words.slice(
    0,
    words.findIndex((w) => w.startsWith('--')),
  )

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

// ---------------------------------------------------------------- Kubernetes

interface EnvVar {
  name: string
  value?: string
  valueFrom?: { configMapKeyRef?: { name: string; key: string }; secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } }
}
interface Container {
  name: string
  image?: string
  command?: string[]
  args?: string[]
  env?: EnvVar[]
  volumeMounts?: { name: string; mountPath: string }[]
}
interface PodSpec {
  restartPolicy?: string
  affinity?: {
    podAntiAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { labelSelector?: { matchLabels?: Record<string, string> }; topologyKey: string }[]
    }
  }
  topologySpreadConstraints?: { maxSkew: number; topologyKey: string; whenUnsatisfiable: string; labelSelector?: { matchLabels?: Record<string, string> } }[]
  initContainers?: Container[]
  containers: Container[]
  volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[]
}
interface K8sJob {
  apiVersion: string
  kind: string
  metadata: { name: string; labels?: Record<string, string> }
  spec: {
    completionMode?: string
    completions?: number
    parallelism?: number
    backoffLimit?: number
    template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec }
  }
}

const K8S = 'examples/k8s-shards.yaml'
const k8sText = read(K8S)
const k8sDocs = parseAllDocuments(k8sText)
const [shardJob, mergeJob] = k8sDocs.map((d) => d.toJS() as K8sJob) as [K8sJob, K8sJob]
const podOf = (job: K8sJob) => job.spec.template.spec
const containersOf = (job: K8sJob) => [...(podOf(job).initContainers ?? []), ...podOf(job).containers]
const argv = (c: Container) => [...(c.command ?? []), ...(c.args ?? [])]
/** The container that runs `servegate SUB`, and the words after SUB. */
function k8sServegate(job: K8sJob, sub: string): { container: Container; words: string[] } {
  for (const c of containersOf(job)) {
    const a = argv(c)
    const i = a.findIndex((w, j) => w === sub && j > 0 && /(^|\/)servegate$/.test(a[j - 1] as string))
    if (i >= 0) return { container: c, words: a.slice(i + 1) }
  }
  throw new Error(`no container of job ${job.metadata.name} runs servegate ${sub}`)
}
/** Where a container mounts the job's PersistentVolumeClaim, and the claim. */
function claimMount(job: K8sJob, c: Container): { claim: string; path: string } {
  const vols = (podOf(job).volumes ?? []).filter((v) => v.persistentVolumeClaim)
  const mounts = (c.volumeMounts ?? []).filter((m) => vols.some((v) => v.name === m.name))
  expect(mounts, `${job.metadata.name}/${c.name} mounts one claim`).toHaveLength(1)
  const vol = vols.find((v) => v.name === mounts[0]!.name)!
  return { claim: vol.persistentVolumeClaim!.claimName, path: mounts[0]!.mountPath }
}
const refs = (s: string) => [...s.matchAll(/(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((m) => m[1] as string)
const N_K8S = shardJob.spec.completions!

describe('examples/k8s-shards.yaml', () => {
  it('is two Jobs: an Indexed one of N shards at once, no retries, no restarts, and a merge', () => {
    expect(k8sDocs.map((d) => d.errors)).toEqual([[], []])
    expect(k8sDocs).toHaveLength(2)
    for (const j of [shardJob, mergeJob]) expect([j.apiVersion, j.kind]).toEqual(['batch/v1', 'Job'])
    expect(shardJob.spec.completionMode).toBe('Indexed')
    expect(N_K8S).toBeGreaterThanOrEqual(2)
    expect(shardJob.spec.parallelism).toBe(N_K8S)
    expect(shardJob.spec.backoffLimit).toBe(0)
    expect(podOf(shardJob).restartPolicy).toBe('Never')
    expect(['Never', 'OnFailure']).toContain(podOf(mergeJob).restartPolicy)
    expect(mergeJob.spec.completionMode).not.toBe('Indexed')
  })

  it('puts each shard on a node of its own', () => {
    const labels = shardJob.spec.template.metadata?.labels ?? {}
    const selects = (sel?: { matchLabels?: Record<string, string> }) =>
      Object.keys(sel?.matchLabels ?? {}).length > 0 && Object.entries(sel!.matchLabels!).every(([k, v]) => labels[k] === v)
    const spec = podOf(shardJob)
    const anti = (spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).some(
      (t) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector),
    )
    const spread = (spec.topologySpreadConstraints ?? []).some(
      (t) => t.topologyKey === 'kubernetes.io/hostname' && t.maxSkew === 1 && t.whenUnsatisfiable === 'DoNotSchedule' && selects(t.labelSelector),
    )
    expect(anti || spread).toBe(true)
  })

  it('runs shard JOB_COMPLETION_INDEX of N, with --start-at, --slot, --time-server and --out on the claim, named by the index', () => {
    const { container, words } = k8sServegate(shardJob, 'run')
    expect(flag(words, '--shard')).toBe(`JOB_COMPLETION_INDEX/${N_K8S}`)
    expect(flag(words, '--start-at')).toMatch(/^\$\([A-Z_]+\)$|^\d{4}-\d\d-\d\dT/)
    expect(Number(flag(words, '--slot'))).toBeGreaterThan(0)
    expect(flag(words, '--time-server')).toMatch(/^[\w.-]+(:\d+)?$/)
    expect(flag(words, '--base-url')).toMatch(/^https?:\/\//)
    const out = flag(words, '--out')!
    const { path } = claimMount(shardJob, container)
    expect(out.startsWith(`${path}/`), out).toBe(true)
    expect(out).toContain('$(JOB_COMPLETION_INDEX)')
    expect(out).toMatch(/\.json$/)
  })

  it('merges exactly the N shard files from the same claim at the same path, then reports the merged result', () => {
    const run = k8sServegate(shardJob, 'run')
    const out = flag(run.words, '--out')!
    const merge = k8sServegate(mergeJob, 'merge')
    expect(claimMount(mergeJob, merge.container)).toEqual(claimMount(shardJob, run.container))
    expect(mergeInputs(merge.words)).toEqual(range(N_K8S).map((i) => out.replace('$(JOB_COMPLETION_INDEX)', String(i))))
    const result = flag(merge.words, '--out')!
    expect(result.startsWith(`${claimMount(mergeJob, merge.container).path}/`)).toBe(true)
    const report = k8sServegate(mergeJob, 'report')
    expect(claimMount(mergeJob, report.container)).toEqual(claimMount(mergeJob, merge.container))
    expect(report.words[0]).toBe(result)
    // The report runs after the merge: the merge is an init container, the report the main one.
    if (report.container !== merge.container) {
      expect((podOf(mergeJob).initContainers ?? []).map((c) => c.name)).toContain(merge.container.name)
      expect(podOf(mergeJob).containers.map((c) => c.name)).toContain(report.container.name)
    }
  })

  it('defines every $(NAME) of a command in that container, the same way in both Jobs', () => {
    const defs = new Map<string, string>()
    for (const job of [shardJob, mergeJob]) {
      for (const c of containersOf(job)) {
        const env = new Map((c.env ?? []).map((e) => [e.name, e]))
        for (const name of argv(c).flatMap(refs)) {
          const where = `${job.metadata.name}/${c.name}: $(${name})`
          if (name === 'JOB_COMPLETION_INDEX' && job === shardJob) continue
          expect(env.has(name), where).toBe(true)
          const def = JSON.stringify(env.get(name))
          // A run id read from another key by the merge would name another folder.
          if (defs.has(name)) expect(def, where).toBe(defs.get(name))
          defs.set(name, def)
        }
      }
    }
    expect([...defs.keys()]).toContain(flag(k8sServegate(shardJob, 'run').words, '--start-at')!.slice(2, -1))
  })

  it('shows in its leading comment how to create each ConfigMap and key the Jobs read, with a start time in the future', () => {
    const comment = k8sText
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .map((l) => l.replace(/^#\s?/, ''))
      .join('\n')
    const creates = new Map<string, { keys: string[]; text: string }>()
    for (const l of logicalLines(comment).filter((x) => /kubectl create configmap /.test(x.text))) {
      const words = flagWords(shellWords(l.text))
      const keys = words.filter((w) => /^--from-(literal|file)=/.test(w)).map((w) => w.replace(/^--from-(literal|file)=/, '').split('=')[0]!)
      creates.set(words[words.indexOf('configmap') + 1]!, { keys, text: l.text })
    }
    for (const job of [shardJob, mergeJob]) {
      for (const c of containersOf(job))
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.configMapKeyRef
          if (ref) expect(creates.get(ref.name)?.keys, `${c.name}: ${e.name}`).toContain(ref.key)
        }
      for (const v of (podOf(job).volumes ?? []) as { configMap?: { name: string } }[]) if (v.configMap) expect(creates.has(v.configMap.name)).toBe(true)
    }
    const startAt = shardJob.spec.template.spec.containers[0]!.env!.find((e) => e.name === 'START_AT')!.valueFrom!.configMapKeyRef!
    expect(creates.get(startAt.name)!.text).toMatch(new RegExp(`--from-literal=${startAt.key}=\\$\\(date -u -d '\\+\\d+ min' \\+%Y-%m-%dT%H:%M:%SZ\\)`))
  })

  it('applies the merge Job only after the shards: the comment selects each Job by a label only it has', () => {
    const applies = [...k8sText.matchAll(/kubectl apply -f \S+ -l (\S+)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as const)
    const picked = applies.map(([k, v]) => [shardJob, mergeJob].filter((j) => j.metadata.labels?.[k] === v).map((j) => j.metadata.name))
    expect(picked).toEqual([[shardJob.metadata.name], [mergeJob.metadata.name]])
    expect(k8sText).toMatch(new RegExp(`kubectl wait --for=condition=complete job/${shardJob.metadata.name}\\b`))
    expect(k8sText.indexOf(`job/${shardJob.metadata.name}`)).toBeLessThan(k8sText.lastIndexOf('-l app.kubernetes.io/component=merge'))
  })

  it('marks the image as the user’s own', () => {
    for (const c of [...containersOf(shardJob), ...containersOf(mergeJob)]) expect(c.image).toBe('ghcr.io/example/servegate:latest')
    expect(k8sText).toMatch(/ghcr\.io\/example\/servegate:latest.*(YOUR OWN|your own)/)
  })
})

// ---------------------------------------------------------------- Slurm

const SLURM = 'examples/slurm-shards.sh'
const slurmText = read(SLURM)
const slurmLines = slurmText.split('\n')
/** `#SBATCH` options as name → value (`--nodes=4`, `--nodes 4`, `-N 4`). */
function sbatchOptions(): Map<string, string> {
  const short: Record<string, string> = { '-N': '--nodes', '-n': '--ntasks', '-t': '--time', '-c': '--cpus-per-task', '-J': '--job-name' }
  const opts = new Map<string, string>()
  for (const l of slurmLines.filter((x) => x.startsWith('#SBATCH'))) {
    const words = flagWords(shellWords(l.slice('#SBATCH'.length)))
    for (let i = 0; i < words.length; i++) {
      const w = words[i] as string
      const eq = w.indexOf('=')
      if (w.startsWith('--') && eq > 0) opts.set(w.slice(0, eq), w.slice(eq + 1))
      else if (w.startsWith('-')) opts.set(short[w] ?? w, words[i + 1]?.startsWith('-') || words[i + 1] === undefined ? '' : (words[++i] as string))
    }
  }
  return opts
}
const sbatch = sbatchOptions()
const N_SLURM = Number(sbatch.get('--nodes'))
const slurmLogical = logicalLines(slurmText)
const srunAt = slurmLogical.find((l) => /^srun\s/.test(l.text))!
const srunWords = srunAt ? shellWords(srunAt.text) : []
/** The per-task command: `srun … bash -c 'SCRIPT' $0 ARGS…` gives SCRIPT's words followed by ARGS. */
function perTask(): { script: string; words: Word[] } {
  const c = srunWords.findIndex((w, i) => w.text === '-c' && /(^|\/)bash$/.test(srunWords[i - 1]?.text ?? ''))
  expect(c, 'srun runs bash -c').toBeGreaterThan(0)
  const script = srunWords[c + 1]!.text
  return { script, words: [...shellWords(script), ...srunWords.slice(c + 3)] }
}

describe('examples/slurm-shards.sh', () => {
  it('asks for N nodes and N tasks, one per node, with a time limit, before any command (sbatch reads no later #SBATCH)', () => {
    expect(N_SLURM).toBeGreaterThanOrEqual(2)
    expect(Number(sbatch.get('--ntasks'))).toBe(N_SLURM)
    expect(sbatch.get('--ntasks-per-node')).toBe('1')
    expect(sbatch.get('--time')).toMatch(/^(\d+-)?\d+(:\d\d){0,2}$/)
    const firstCommand = slurmLines.findIndex((l, i) => i > 0 && l.trim() !== '' && !l.trim().startsWith('#'))
    const lastDirective = slurmLines.map((l) => l.startsWith('#SBATCH')).lastIndexOf(true)
    expect(lastDirective).toBeLessThan(firstCommand)
    expect(slurmLines[0]).toMatch(/^#!.*\bbash\b/)
  })

  it('sets -euo pipefail before it runs anything', () => {
    const set = slurmLogical.findIndex((l) => /^set -euo pipefail\b/.test(l.text))
    expect(set).toBeGreaterThanOrEqual(0)
    expect(slurmLogical[set]!.line).toBeLessThan(srunAt.line)
  })

  it('runs shard SLURM_PROCID of N in every task, on the allocation or on N nodes and tasks', () => {
    const { words } = perTask()
    expect(flag(flagWords(words), '--shard')).toBe(`SLURM_PROCID/${N_SLURM}`)
    const srunOpts = flagWords(
      srunWords.slice(
        1,
        srunWords.findIndex((w) => /(^|\/)bash$/.test(w.text)),
      ),
    )
    for (const [long, short] of [
      ['--nodes', '-N'],
      ['--ntasks', '-n'],
    ] as const) {
      const v = flag(srunOpts, long) ?? flag(srunOpts, short)
      if (v !== undefined) expect(Number(v), long).toBe(N_SLURM)
    }
    expect(flag(srunOpts, '--ntasks-per-node') ?? '1').toBe('1')
    expect(srunOpts).toContain('--kill-on-bad-exit=1')
  })

  it('computes START_AT once, before srun, two minutes or so ahead, and hands every task the same value', () => {
    const assigns = slurmLogical.filter((l) => /^(export\s+)?START_AT=/.test(l.text))
    expect(assigns).toHaveLength(1)
    expect(assigns[0]!.line).toBeLessThan(srunAt.line)
    expect(assigns[0]!.text).toMatch(/date -u -d '\+\d+ min' \+%Y-%m-%dT%H:%M:%SZ/)
    const { script, words } = perTask()
    expect(script).not.toMatch(/\bdate\b|START_AT=/)
    const startAt = words.find((w, i) => words[i - 1]?.text === '--start-at')!
    // Expanded by the batch script, which has the one value; never computed per task.
    expect(startAt.text).toBe('$START_AT')
    expect(startAt.expands).toBe(true)
    expect(flag(flagWords(words), '--slot')).toMatch(/^\d+$|^\$\w+$/)
    expect(flag(flagWords(words), '--time-server')).toMatch(/\S/)
  })

  it("writes each task's --out with the task's own SLURM_PROCID, expanded in the task, not once in the batch script", () => {
    const { script, words } = perTask()
    const out = words.find((w, i) => words[i - 1]?.text === '--out')!
    expect(out.text).toMatch(/shard-\$\{?SLURM_PROCID\}?\.json$/)
    // The bash -c script is single-quoted: the batch script passes $SLURM_PROCID through unexpanded.
    expect(script).toContain(`--out`)
    const outer = srunWords.filter((w) => w.text !== script)
    for (const w of outer) expect(w.text.includes('$SLURM_PROCID') || w.text.includes('${SLURM_PROCID}'), w.text).toBe(false)
    // Every other variable the task's script reads comes from the batch script's environment.
    for (const v of [...script.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => m[1]!)) {
      if (v.startsWith('SLURM_')) continue
      expect(slurmText, `export ${v}`).toMatch(new RegExp(`^export ${v}\\b`, 'm'))
    }
  })

  it('merges the shard files after srun returns, then reports the merged result', () => {
    const merge = servegate(slurmText, 'merge')!
    expect(merge.line).toBeGreaterThan(srunAt.line)
    const out = perTask().words.find((w, i, a) => a[i - 1]?.text === '--out')!.text
    const inputs = mergeInputs(flagWords(merge.words))
    expect(inputs).toEqual([out.replace(/\$\{?SLURM_PROCID\}?/, '*')])
    const result = flag(flagWords(merge.words), '--out')!
    const report = servegate(slurmText, 'report')!
    expect(report.line).toBeGreaterThan(merge.line)
    expect(report.words[0]!.text).toBe(result)
  })
})

// ---------------------------------------------------------------- GitHub Actions

interface Step {
  name?: string
  id?: string
  if?: string
  uses?: string
  run?: string
  with?: Record<string, unknown>
  env?: Record<string, string>
}
interface Job {
  if?: string
  needs?: string | string[]
  'runs-on'?: RunsOn
  permissions?: Record<string, string> | string
  outputs?: Record<string, string>
  env?: Record<string, string>
  strategy?: { 'fail-fast'?: boolean; matrix?: Record<string, unknown> }
  steps?: Step[]
}
interface Workflow {
  on: Record<string, { inputs?: Record<string, unknown> } | null>
  permissions?: unknown
  env?: Record<string, string>
  jobs: Record<string, Job>
}
const wf = parse(read('examples/servegate-shards.yml')) as Workflow
const needsOf = (job: Job) => ([] as string[]).concat(job.needs ?? [])
const shardJobId = Object.keys(wf.jobs).find((id) => (wf.jobs[id]!.steps ?? []).some((s) => servegate(s.run ?? '', 'run')))!
const mergeJobId = Object.keys(wf.jobs).find((id) => (wf.jobs[id]!.steps ?? []).some((s) => servegate(s.run ?? '', 'merge')))!
const ghShard = wf.jobs[shardJobId]!
const ghMerge = wf.jobs[mergeJobId]!
const stepOf = (job: Job, sub: string) => job.steps!.find((s) => servegate(s.run ?? '', sub))!
/** A word of a run script as GitHub would hand it over: `$VAR` resolved through the step's, job's and workflow's env. */
function resolve(word: string, job: Job, step: Step): string {
  return word.replace(/\$\{?([A-Za-z_]\w*)\}?/g, (all, v: string) => step.env?.[v] ?? job.env?.[v] ?? wf.env?.[v] ?? all)
}
const shardRun = () => {
  const step = stepOf(ghShard, 'run')
  return { step, words: flagWords(servegate(step.run!, 'run')!.words).map((w) => resolve(w, ghShard, step)) }
}
const shardFlag = /^\$\{\{ matrix\.(\w+) \}\}\/(\d+)$/
const N_GH = Number(shardFlag.exec(flag(shardRun().words, '--shard') ?? '')?.[2])
const ctx = (shard: number): Contexts => ({
  github: { repository: 'acme/serving', run_attempt: '1', run_id: '77', event_name: 'workflow_dispatch' },
  inputs: { 'base-url': 'http://vllm.inference.svc:8000' },
  matrix: { shard },
  needs: { plan: { result: 'success', outputs: { start_at: '2026-12-07T10:00:00Z' } } },
})

describe('examples/servegate-shards.yml', () => {
  it('runs by hand with a base-url input, reading the repository and writing nothing', () => {
    expect(Object.keys(wf.on)).toEqual(['workflow_dispatch'])
    expect(Object.keys(wf.on.workflow_dispatch?.inputs ?? {})).toContain('base-url')
    expect(wf.permissions).toEqual({ contents: 'read' })
    for (const [id, job] of Object.entries(wf.jobs)) {
      const p = job.permissions
      expect(typeof p === 'object' ? Object.values(p) : [p], id).not.toContain('write')
      expect(p, id).not.toBe('write-all')
    }
  })

  it('runs shard matrix.shard of N in a matrix of exactly 0 … N-1, without fail-fast, on the self-hosted load runners', () => {
    const shard = shardFlag.exec(flag(shardRun().words, '--shard')!)!
    const key = shard[1]!
    expect(N_GH).toBeGreaterThanOrEqual(2)
    expect(ghShard.strategy?.matrix?.[key]).toEqual(range(N_GH))
    expect(ghShard.strategy?.['fail-fast']).toBe(false)
    expect(runnerLabels(ghShard['runs-on'])).toEqual(expect.arrayContaining(['self-hosted', 'servegate-load']))
  })

  it("takes start_at from the plan job's outputs, which its step writes once, two minutes or so ahead", () => {
    const startAt = flag(shardRun().words, '--start-at')!
    const m = /^\$\{\{ needs\.(\w+)\.outputs\.(\w+) \}\}$/.exec(startAt)!
    expect(m, startAt).not.toBeNull()
    const [, planId, output] = m as unknown as [string, string, string]
    expect(needsOf(ghShard)).toContain(planId)
    const plan = wf.jobs[planId]!
    const from = /^\$\{\{ steps\.(\w+)\.outputs\.(\w+) \}\}$/.exec(plan.outputs?.[output] ?? '')!
    expect(from).not.toBeNull()
    const step = plan.steps!.find((s) => s.id === from[1])!
    expect(step.run).toMatch(new RegExp(`\\b${from[2]}=\\$\\w+`))
    expect(step.run).toMatch(/date -u -d '\+\d+ min' \+%Y-%m-%dT%H:%M:%SZ/)
    expect(step.run).toContain('>> "$GITHUB_OUTPUT"')
    expect(runnerLabels(plan['runs-on'])).not.toContain('self-hosted')
    const words = shardRun().words
    expect(Number(flag(words, '--slot'))).toBeGreaterThan(0)
    expect(flag(words, '--time-server')).toMatch(/^[\w.-]+(:\d+)?$/)
  })

  it("uploads both of each shard's files under a name of its own that the merge's download pattern matches", () => {
    const { words } = shardRun()
    const runIndex = ghShard.steps!.indexOf(stepOf(ghShard, 'run'))
    const uploads = ghShard.steps!.filter((s) => s.uses?.startsWith('actions/upload-artifact@'))
    expect(uploads).toHaveLength(1)
    const up = uploads[0]!
    expect(ghShard.steps!.indexOf(up)).toBeGreaterThan(runIndex)
    expect(up.with?.['if-no-files-found']).toBe('error')
    const down = ghMerge.steps!.find((s) => s.uses?.startsWith('actions/download-artifact@'))!
    expect(down.with?.['merge-multiple']).toBe(true)
    const names = range(N_GH).map((i) => {
      const paths = String(up.with!['path'])
        .split('\n')
        .map((p) => interpolate(p.trim(), ctx(i)))
        .filter(Boolean)
      const out = interpolate(flag(words, '--out')!, ctx(i))
      expect(out).toBe(`shard-${i}.json`)
      expect(paths.sort()).toEqual([out, out.replace(/\.json$/, '.records.jsonl.gz')].sort())
      return interpolate(String(up.with!['name']), ctx(i))
    })
    expect(new Set(names).size).toBe(N_GH)
    const pattern = interpolate(String(down.with!['pattern']), ctx(0))
    for (const n of names) expect(globMatches(pattern, n), n).toBe(true)
    // Another attempt's shards are not merged into this one.
    const again = { ...ctx(0), github: { ...(ctx(0)['github'] as object), run_attempt: '2' } } as Contexts
    for (const n of names) expect(globMatches(interpolate(String(down.with!['pattern']), again), n), n).toBe(false)
  })

  it('merges only when every shard succeeded: needs the shard job, with no if: that runs after a failure or a cancel', () => {
    expect(needsOf(ghMerge)).toContain(shardJobId)
    const hasStatusFn = ghMerge.if !== undefined && /\b(always|success|failure|cancelled)\s*\(/.test(ghMerge.if)
    for (const status of ['failure', 'cancelled'] as const) {
      const runs = hasStatusFn && evaluateIf(ghMerge.if, ctx(0), { status })
      expect(runs, status).toBe(false)
    }
    expect(evaluateIf(ghMerge.if, ctx(0))).toBe(true)
  })

  it('merges the downloaded shard files, reports the result and uploads both', () => {
    const down = ghMerge.steps!.find((s) => s.uses?.startsWith('actions/download-artifact@'))!
    const step = stepOf(ghMerge, 'merge')
    const merge = flagWords(servegate(step.run!, 'merge')!.words)
    expect(mergeInputs(merge)).toEqual([`${String(down.with!['path'])}/shard-*.json`])
    const result = flag(merge, '--out')!
    const report = servegate(step.run!, 'report')!
    expect(report.words[0]!.text).toBe(result)
    const markdown = flag(flagWords(report.words), '--markdown')
    const up = ghMerge.steps!.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!
    expect(ghMerge.steps!.indexOf(up)).toBeGreaterThan(ghMerge.steps!.indexOf(step))
    const paths = String(up.with!['path'])
      .split('\n')
      .map((p) => p.trim())
      .filter(Boolean)
    expect(paths).toContain(result)
    if (markdown) expect(paths).toContain(markdown)
  })

  it('passes inputs and outputs to scripts through env:, never pasted into a run: script', () => {
    for (const [id, job] of Object.entries(wf.jobs))
      for (const s of job.steps ?? []) expect(s.run ?? '', `${id}: ${s.name ?? s.id ?? s.uses}`).not.toContain('${{')
    const { step } = shardRun()
    expect(step.env?.['BASE_URL']).toBe('${{ inputs.base-url }}')
    expect(flag(flagWords(servegate(step.run!, 'run')!.words), '--base-url')).toBe('$BASE_URL')
  })

  it('installs servegate on Node 24 in every job that runs it, with no git credentials left behind', () => {
    for (const job of [ghShard, ghMerge]) {
      const node = job.steps!.find((s) => s.uses?.startsWith('actions/setup-node@'))
      expect(String(node?.with?.['node-version'])).toBe('24')
      for (const co of job.steps!.filter((s) => s.uses?.startsWith('actions/checkout@'))) expect(co.with?.['persist-credentials']).toBe(false)
    }
  })
})
