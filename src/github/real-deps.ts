/**
 * The real ActionDeps: @actions/core for inputs, outputs, logs and the job
 * summary; @actions/github for the event and the REST API; git on PATH; the
 * file system; and servegate's stages. Only this folder imports @actions/*.
 */
import { UsageError } from '../errors.js'
import * as core from '@actions/core'
import { context } from '@actions/github'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { renderAbMarkdown } from '../report/ab-report.js'
import { runAB } from '../ab/run-ab.js'
import { loadConfigFile, parseConfigText } from '../config/load.js'
import { resolveConfig } from '../config/resolve.js'
import { compareToBaseline, mergeResults } from '../gate/index.js'
import { compareStarts } from '../gate/seq-baseline.js'
import { renderMarkdownReport } from '../report/markdown.js'
import { renderMermaidCurve } from '../report/mermaid.js'
import { renderVerdictMarkdown } from '../report/verdict-markdown.js'
import { parseBaseline, readBaseline, writeBaseline } from '../store/baseline.js'
import { appendNoise, appendRefresh, resetKeepingNoise } from '../gate/refresh.js'
import { parseJsonText } from '../util/json-file.js'
import { readResultFile, writeResultFile } from '../store/result-file.js'
import { runSweep } from '../sweep/run-sweep.js'
import type { EventPayload } from './context.js'
import type { ActionDeps, ActionStages } from './deps.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import { githubClient } from './octokit-api.js'
import { execGit } from './refresh-commit.js'

/** servegate's stages as the action calls them (the gate options come from the resolved config's gate block). */
export const realStages: ActionStages = {
  loadConfigFile,
  parseConfigText,
  resolveConfig,
  runSweep,
  writeResultFile,
  mergeResults,
  readBaseline,
  parseBaselineText: (text, source) => parseBaseline(parseJsonText(text, source), source),
  readResultFile,
  compareToBaseline: (baseline, candidate, cfg, step) => compareToBaseline(baseline, candidate, { ...optionsFromGateSettings(cfg.gate), ...step }),
  compareStarts: (baseline, candidate, cfg, step, startOf) => compareStarts(baseline, candidate, { ...optionsFromGateSettings(cfg.gate), ...step }, startOf),
  appendRefresh: (existing, result, info) => {
    const opts = { name: info.name, ...(info.commit !== null ? { commit: info.commit } : {}) }
    if (info.how === 'reset') return resetKeepingNoise(existing, result, opts)
    if (info.how === 'noise') {
      if (existing === null)
        throw new UsageError('noise-only: there is no baseline to keep the start beside; store a refresh first (mode refresh without noise-only)')
      return appendNoise(existing, result, opts)
    }
    return appendRefresh(existing, result, opts)
  },
  writeBaseline,
  renderVerdictMarkdown,
  renderMarkdownReport,
  renderMermaidCurve,
  runAB,
  renderAbMarkdown,
}

/** Deps wired to the Actions runtime; a cancelled job (SIGINT/SIGTERM) aborts the sweep. */
export function realActionDeps(): ActionDeps {
  const abort = new AbortController()
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      core.warning(`servegate: ${sig} received (job cancelled?); stopping the sweep.`)
      abort.abort(new Error(`${sig} received`))
    })
  }
  return {
    core: {
      getInput: (name) => core.getInput(name),
      setOutput: (name, value) => core.setOutput(name, value),
      setFailed: (message) => core.setFailed(message),
      setSecret: (secret) => core.setSecret(secret),
      info: (message) => core.info(message),
      warning: (message, opts) => core.warning(message, opts?.title === undefined ? {} : { title: opts.title }),
      error: (message) => core.error(message),
      appendSummary: async (markdown) => {
        await core.summary.addRaw(markdown, true).write()
      },
      saveState: (name, value) => core.saveState(name, value),
      getState: (name) => core.getState(name),
    },
    env: process.env,
    cwd: process.cwd(),
    event: { name: context.eventName ?? '', payload: context.payload as EventPayload },
    github: (token) => githubClient(token, { ...context.repo, warn: (m) => core.warning(m) }),
    stages: realStages,
    git: execGit,
    files: {
      exists: (path) => existsSync(path),
      writeText: async (path, text) => {
        await mkdir(dirname(path), { recursive: true })
        await writeFile(path, text, 'utf8')
      },
    },
    signal: abort.signal,
  }
}
