/**
 * The action's inputs (see action.yml), read as raw strings and validated with
 * zod so that every bad input is reported at once, naming the input and what
 * it accepts.
 */
import { z } from 'zod'
import { MIN_AB_ROUNDS, parseGpuList, roundsProblem } from '../plan/ab-schedule.js'
import { DEFAULT_MAX_ROUNDS } from '../gate/ab-looks.js'
import { UsageError } from '../errors.js'
import { parseFailOn, type FailOnVerdict } from '../gate/outcome.js'
import { parseExpect } from '../gate/aggregate.js'
import { formatIssues } from '../util/json-file.js'
import { secretsInText } from '../util/redact.js'

/**
 * `check`: only the guards (fork, base-branch terms), no sweep: a workflow runs it before anything is pulled.
 * `ab`: the reference engine (A) and the candidate (B) measured in alternating slots on this runner, paired verdict.
 * `aggregate`: no sweep; the verdict records of a matrix's jobs (`records`, `expect`) as one verdict and one comment.
 * `watch`: the gate sweep on the default branch against its baseline, on a schedule; a tracking issue instead of a comment.
 */
export const MODES = ['gate', 'full', 'refresh', 'check', 'ab', 'aggregate', 'watch'] as const
const COMMENT_POLICIES = ['always', 'on-regression', 'never'] as const

export type Mode = (typeof MODES)[number]
export type CommentPolicy = (typeof COMMENT_POLICIES)[number]
/** The verdicts that fail the step (empty: never fail on a verdict). */
export type FailOnPolicy = readonly FailOnVerdict[]

/** Validated inputs. Empty optional strings become undefined; defaults are applied. */
export interface ActionInputs {
  mode: Mode
  config?: string
  /** Sweep name; when absent, chosen by mode (see chooseSweep). */
  sweep?: string
  baseUrl?: string
  model?: string
  /** Baseline path, relative to the working directory; when absent `baselines/<sweep>.json`. */
  baseline?: string
  comment: CommentPolicy
  failOn: FailOnPolicy
  githubToken?: string
  containerDigest?: string
  serveCommand?: string
  /** Start the server with this command (servegate run's --serve). */
  serve?: string
  allowFork: boolean
  /** When the verdict is undecided, run the extra repeats the gate asks for and decide over all runs. */
  confirm: boolean
  refreshCommit: boolean
  refreshPush: boolean
  /** refresh mode: start a new baseline history (required when the host changed) instead of appending. */
  reset: boolean
  /** refresh mode: keep the run in the baseline's noise history (the spread alone), not as a refresh. */
  noiseOnly: boolean
  workingDirectory: string
  out: string
  /** NAME in the sticky comment's marker `<!-- servegate:NAME -->`; when absent the baseline's file stem. */
  commentKey?: string
  /** Put the base URL and host name in the PR comment too. */
  showHost: boolean
  /** mode ab: the reference engine A, a command servegate starts or a URL where it answers (exactly one). */
  aServe?: string
  aBaseUrl?: string
  /** mode ab: the candidate B; absent, `serve` / `base-url` are B's. */
  bServe?: string
  bBaseUrl?: string
  /** Rounds of two slots (A B, B A, …) of an A/B decision (mode ab, or gate with a reference); default 6. */
  rounds: number
  /** Sequential decisions: look after `rounds`, then after every round (or candidate start) up to this many (src/gate/ab-looks.ts); default 32. */
  maxRounds: number
  /** A/B: accepted for older workflows; each side started for its own slots is the default. */
  exclusive: boolean
  /** A/B: keep both engines up for the whole job (each side on GPUs of its own, `aGpus` / `bGpus`). */
  resident: boolean
  /** A/B: the GPUs of A's and B's commands (CUDA_VISIBLE_DEVICES), e.g. ['0', '1']. */
  aGpus?: string[]
  bGpus?: string[]
  /** gate mode: a serve command for the reference engine; the gate then decides A/B on this runner (config gate.reference_command). */
  referenceServe?: string
  /** The configuration this job measures, named in its verdict record (default: the comment key). */
  label?: string
  /** mode aggregate: the folder the matrix's verdict records were downloaded into. */
  records?: string
  /** mode aggregate: the configuration labels the matrix runs. */
  expect?: string[]
}

/** Reads one input by its action.yml name; returns '' when unset (as GitHub does). */
export type InputReader = (name: string) => string

/** Every input name action.yml declares, in order. */
export const INPUT_NAMES = [
  'mode',
  'config',
  'sweep',
  'base-url',
  'model',
  'baseline',
  'comment',
  'fail-on',
  'github-token',
  'container-digest',
  'serve-command',
  'serve',
  'allow-fork',
  'confirm',
  'refresh-commit',
  'refresh-push',
  'reset',
  'noise-only',
  'working-directory',
  'out',
  'comment-key',
  'show-host',
  'a-serve',
  'a-base-url',
  'b-serve',
  'b-base-url',
  'rounds',
  'max-rounds',
  'exclusive',
  'resident',
  'a-gpus',
  'b-gpus',
  'reference-serve',
  'label',
  'records',
  'expect',
] as const

const optional = z.string().transform((s) => (s === '' ? undefined : s))

/** A GPU list input ("0,1"); empty: none given. */
function gpuInput(name: string) {
  return z.string().transform((s, ctx) => {
    if (s === '') return undefined
    try {
      return parseGpuList(s, `input "${name}"`)
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(`input "${name}" `, '') })
      return z.NEVER
    }
  })
}

// YAML 1.2 core-schema booleans, the spellings GitHub documents for boolean inputs.
const bool = (fallback: boolean) =>
  z.string().transform((s, ctx) => {
    if (s === '') return fallback
    if (['true', 'True', 'TRUE'].includes(s)) return true
    if (['false', 'False', 'FALSE'].includes(s)) return false
    ctx.addIssue({ code: 'custom', message: `"${s}" is not a boolean; expected true or false` })
    return z.NEVER
  })

const oneOf = <T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.string().transform((s, ctx) => {
    const v = s === '' ? fallback : s
    if ((values as readonly string[]).includes(v)) return v as T[number]
    ctx.addIssue({ code: 'custom', message: `"${s}" is not allowed; expected one of ${values.join(', ')}` })
    return z.NEVER
  })

const schema = z.object({
  mode: oneOf(MODES, 'gate'),
  config: optional,
  sweep: optional,
  'base-url': optional,
  model: optional,
  baseline: optional,
  comment: oneOf(COMMENT_POLICIES, 'always'),
  'fail-on': z.string().transform((s, ctx) => {
    try {
      return parseFailOn(s, 'fail-on')
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `${(err as Error).message.replace(/^fail-on /, '')}` })
      return z.NEVER
    }
  }),
  'github-token': optional,
  'container-digest': optional,
  'serve-command': optional,
  serve: optional,
  'allow-fork': bool(false),
  confirm: bool(true),
  'refresh-commit': bool(true),
  'refresh-push': bool(true),
  reset: bool(false),
  'noise-only': bool(false),
  'working-directory': optional,
  out: optional,
  'comment-key': optional.refine((s) => s === undefined || /^[A-Za-z0-9._-]+$/.test(s), {
    message: 'expected letters, digits, ".", "_" or "-" (it goes inside an HTML comment)',
  }),
  'show-host': bool(false),
  'a-serve': optional,
  'a-base-url': optional,
  'b-serve': optional,
  'b-base-url': optional,
  // 2 rounds: the first look needs a round of each order; each row's sequential test looks after every round.
  rounds: z.string().transform((s, ctx) => {
    if (s === '') return 2
    if (/^\d+$/.test(s) && Number(s) <= 100 && roundsProblem(Number(s)) === null) return Number(s)
    ctx.addIssue({
      code: 'custom',
      message: `"${s}" is not allowed; expected a whole number of rounds from ${MIN_AB_ROUNDS} to 100 (the first look needs a round of each order)`,
    })
    return z.NEVER
  }),
  // 32: what the gate's own bench needs on a host whose engine starts drift 3 % (docs/gate.md).
  'max-rounds': z.string().transform((s, ctx) => {
    if (s === '') return DEFAULT_MAX_ROUNDS
    if (/^\d+$/.test(s) && Number(s) <= 100 && roundsProblem(Number(s)) === null) return Number(s)
    ctx.addIssue({ code: 'custom', message: `"${s}" is not allowed; expected a whole number of rounds from ${MIN_AB_ROUNDS} to 100, no smaller than rounds` })
    return z.NEVER
  }),
  exclusive: bool(false),
  resident: bool(false),
  'a-gpus': gpuInput('a-gpus'),
  'b-gpus': gpuInput('b-gpus'),
  'reference-serve': optional,
  // Matched against the expect list, which commas and spaces separate.
  label: optional.refine((s) => s === undefined || /^[^\s,]+$/.test(s), {
    message: 'expected one word without spaces or commas (the expect list of mode aggregate is separated by them)',
  }),
  records: optional,
  expect: optional,
})

/** Read and validate every input; throws one UsageError listing all problems. */
export function readInputs(read: InputReader): ActionInputs {
  const raw: Record<string, string> = {}
  for (const name of INPUT_NAMES) raw[name] = read(name).trim()
  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    throw new UsageError(
      `servegate action inputs are invalid:\n${formatIssues(parsed.error, (p) => `input "${p}"`)}`,
      'See the inputs in action.yml or docs/action.md.',
    )
  }
  const p = parsed.data
  const problems: string[] = []
  if (p.mode === 'ab') {
    if ((p['a-serve'] === undefined) === (p['a-base-url'] === undefined))
      problems.push('mode ab: give exactly one of the inputs "a-serve" and "a-base-url" (the reference engine A)')
    if (p['b-serve'] !== undefined && p['b-base-url'] !== undefined)
      problems.push('mode ab: give at most one of the inputs "b-serve" and "b-base-url" (the candidate B; without them, "serve" or "base-url")')
  }
  if (p.resident && p.exclusive) problems.push('the inputs "resident" and "exclusive" are both true; give one (exclusive is the default)')
  let expect: string[] | undefined
  if (p.mode === 'aggregate') {
    if (p.records === undefined) problems.push('mode aggregate: the input "records" is empty; expected the folder the verdict records were downloaded into')
    try {
      expect = parseExpect(p.expect ?? '', 'mode aggregate: the input "expect"')
    } catch (err) {
      problems.push((err as Error).message)
    }
  }
  if (problems.length > 0)
    throw new UsageError(`servegate action inputs are invalid:\n${problems.map((m) => `  ${m}`).join('\n')}`, `See mode ${p.mode} in docs/action.md.`)
  return {
    mode: p.mode,
    config: p.config,
    sweep: p.sweep,
    baseUrl: p['base-url'],
    model: p.model,
    baseline: p.baseline,
    comment: p.comment,
    failOn: p['fail-on'],
    githubToken: p['github-token'],
    containerDigest: p['container-digest'],
    serveCommand: p['serve-command'],
    serve: p.serve,
    allowFork: p['allow-fork'],
    confirm: p.confirm,
    refreshCommit: p['refresh-commit'],
    refreshPush: p['refresh-push'],
    reset: p.reset,
    noiseOnly: p['noise-only'],
    workingDirectory: p['working-directory'] ?? '.',
    out: p.out ?? 'servegate-result.json',
    commentKey: p['comment-key'],
    showHost: p['show-host'],
    aServe: p['a-serve'],
    aBaseUrl: p['a-base-url'],
    bServe: p['b-serve'],
    bBaseUrl: p['b-base-url'],
    rounds: p.rounds,
    // Never fewer than the first look: max-rounds below rounds means one look, at rounds.
    maxRounds: Math.max(p.rounds, p['max-rounds']),
    exclusive: p.exclusive,
    resident: p.resident,
    aGpus: p['a-gpus'],
    bGpus: p['b-gpus'],
    referenceServe: p['reference-serve'],
    label: p.label,
    records: p.records,
    expect,
  }
}

/** The sweep a mode runs when the input names none: a refresh records the profile the gate compares against. */
export function modeSweep(mode: Mode): string {
  return mode === 'full' ? 'full' : 'gate'
}

/**
 * The sweep to ask the config for: the input's; else the mode's default when
 * the file defines it; else none (the config stage then picks the file's
 * `full` or only sweep, or its built-in default when there is no file).
 */
export function chooseSweep(inputs: Pick<ActionInputs, 'mode' | 'sweep'>, fileSweeps: readonly string[] | null): string | undefined {
  if (inputs.sweep !== undefined) return inputs.sweep
  const wanted = modeSweep(inputs.mode)
  return fileSweeps?.includes(wanted) ? wanted : undefined
}

/** Baseline path (relative to the working directory) for a resolved sweep name. */
export function baselinePathFor(inputs: Pick<ActionInputs, 'baseline'>, sweepName: string): string {
  return inputs.baseline ?? `baselines/${sweepName}.json`
}

/**
 * The marker NAME: the input's, else the baseline file's stem; mode ab adds `-ab`, so a workflow that
 * runs the gate and an A/B job on one pull request keeps one comment for each; mode aggregate's is `matrix`.
 */
export function commentKeyFor(inputs: Pick<ActionInputs, 'commentKey'> & Partial<Pick<ActionInputs, 'mode'>>, baselinePath: string): string {
  if (inputs.commentKey !== undefined) return inputs.commentKey
  // One comment for the whole matrix, beside any per-job ones.
  if (inputs.mode === 'aggregate') return 'matrix'
  const stem = baselinePath.replace(/^.*[\\/]/, '').replace(/\.json$/i, '')
  const key = stem.replace(/[^A-Za-z0-9._-]/g, '-') || 'servegate'
  return inputs.mode === 'ab' ? `${key}-ab` : key
}

/**
 * The credentials a serve command line carries, to mask in every log line: the
 * values redactSecrets hides by context (src/util/redact.ts), so the log masking
 * and the recorded text follow one rule. Values under 8 characters are left
 * (masking "1" would blank every digit in the log).
 */
export function secretsInCommand(command: string): string[] {
  return secretsInText(command)
}
