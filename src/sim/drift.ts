/**
 * Simulated host drift: a factor on every step time (and deterministic TTFT
 * and ITL) that changes while the simulator runs, so a test can make "the
 * host" slower between or during measurements without a GPU.
 *
 * - drift file: a number F read from a file the test controls (checked at
 *   most every DRIFT_FILE_CHECK_MS, re-read only when its mtime, size or
 *   inode changed); a missing file is F = 1. Several simulator processes
 *   reading one file drift together, like servers sharing one host.
 * - drift per minute X: (1 + X · wall minutes since start), a host that slowly
 *   heats up (wall time, not model time: the host ages whatever --time-scale).
 *
 * The two multiply, on top of --slowdown and the noise factors.
 */
import { readFileSync, statSync } from 'node:fs'
import { UsageError } from '../errors.js'
import { nowNs } from './clock.js'

/** How often the drift file may be checked, ms. */
export const DRIFT_FILE_CHECK_MS = 100

export interface DriftSettings {
  /** Path of a file holding the factor F; null: no file. */
  driftFile: string | null
  /** Step times × (1 + driftPerMin × wall minutes since start); ≥ 0, 0: none. */
  driftPerMin: number
}

/** The current drift factor of one simulator instance. */
export interface HostDrift {
  /** Factor at monotonic time `atNs` (nowNs scale); 1 = no drift. */
  factor(atNs: number): number
}

/** No drift: always 1 (the engines' default). */
export const NO_DRIFT: HostDrift = { factor: () => 1 }

/** Parse a drift file's text: a finite number > 0, or null for empty text (a write in progress). */
function parseDriftText(text: string): number | null {
  const t = text.trim()
  if (t === '') return null
  const v = Number(t)
  return Number.isFinite(v) && v > 0 ? v : Number.NaN
}

const MS_PER_MIN = 60_000

/**
 * Build the drift of one simulator started at `startNs`. Throws UsageError when
 * the drift file exists at start and does not hold a number > 0; a later bad
 * write keeps the last good factor and is reported once through `warn`.
 */
export function createHostDrift(s: DriftSettings, startNs: number, warn: (line: string) => void): HostDrift {
  if (s.driftFile === null && s.driftPerMin === 0) return NO_DRIFT
  const file = s.driftFile === null ? null : new DriftFile(s.driftFile, warn)
  return {
    factor(atNs: number): number {
      const minutes = Math.max(0, atNs - startNs) / 1e6 / MS_PER_MIN
      const heat = 1 + s.driftPerMin * minutes
      return heat * (file === null ? 1 : file.read(atNs))
    },
  }
}

class DriftFile {
  private checkedAtNs = Number.NEGATIVE_INFINITY
  private stamp = ''
  private value = 1
  private lastBad = ''

  constructor(
    private readonly path: string,
    private readonly warn: (line: string) => void,
  ) {
    this.refresh(nowNs(), true)
  }

  read(atNs: number): number {
    if (atNs - this.checkedAtNs >= DRIFT_FILE_CHECK_MS * 1e6) this.refresh(atNs, false)
    return this.value
  }

  private refresh(atNs: number, atStart: boolean): void {
    this.checkedAtNs = atNs
    let stamp: string
    try {
      const st = statSync(this.path)
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`
    } catch {
      // A missing file means no drift (the test has not written it, or removed it).
      this.stamp = ''
      this.value = 1
      return
    }
    if (stamp === this.stamp) return
    let text: string
    try {
      text = readFileSync(this.path, 'utf8')
    } catch {
      return // replaced between stat and read: look again at the next check
    }
    const v = parseDriftText(text)
    if (v === null) return // empty: a write in progress, keep the last factor and look again
    this.stamp = stamp
    if (Number.isNaN(v)) {
      const line = `--drift-file ${this.path}: "${text.trim().slice(0, 40)}" is not a number > 0 (the step-time factor); keeping ${this.value}`
      if (atStart) throw new UsageError(line.replace(/; keeping .*$/, ''), 'Write one number, e.g. 1.2 for steps 20 % slower.')
      if (line !== this.lastBad) this.warn(line)
      this.lastBad = line
      return
    }
    this.value = v
  }
}
