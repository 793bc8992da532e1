/**
 * Sweep progress: points done of total, the point running, elapsed time and
 * an estimate of the time left. A live bar on a terminal; plain log lines
 * (one per start and finish) when the output is a file or CI, where a redrawn
 * bar would only fill the log with control characters.
 */
import cliProgress from 'cli-progress'

export interface Progress {
  /** A point has started. */
  start(label: string): void
  /** A point has finished; `summary` is a one-line result (throughput, ITL, validity). */
  done(label: string, summary: string): void
  /** `n` points were already measured before this session (a resumed sweep): count them as done. */
  skip(n: number): void
  /** Ends the display (also after an interruption); safe to call twice. */
  stop(): void
}

/** Elapsed or remaining time as `1h02m`, `3m05s`, `12s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = s % 60
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`
  if (m > 0) return `${m}m${String(sec).padStart(2, '0')}s`
  return `${sec}s`
}

/** A progress display for `total` points; `tty` chooses the live bar, otherwise plain lines. `now` is ms (for tests). */
export function createProgress(total: number, opts: { stream: NodeJS.WritableStream; tty: boolean; now?: () => number }): Progress {
  const now = opts.now ?? Date.now
  const began = now()
  const count = { finished: 0, skipped: 0 }
  // Estimate from the points finished in this session (resumed ones took no time here): mean time per point × points left.
  const eta = (): string =>
    count.finished === 0 ? 'unknown' : formatDuration(((now() - began) / count.finished) * Math.max(0, total - count.skipped - count.finished))
  return opts.tty ? barProgress(total, opts.stream, eta, count) : lineProgress(total, opts.stream, now, began, eta, count)
}

interface Counts {
  /** Points finished in this session. */
  finished: number
  /** Points finished before it (resumed). */
  skipped: number
}

function lineProgress(total: number, stream: NodeJS.WritableStream, now: () => number, began: number, eta: () => string, count: Counts): Progress {
  let stopped = false
  const write = (line: string): void => void stream.write(`${line}\n`)
  return {
    start(label) {
      if (stopped) return
      write(`[${count.skipped + count.finished + 1}/${total}] running ${label} (elapsed ${formatDuration(now() - began)})`)
    },
    done(label, summary) {
      if (stopped) return
      count.finished++
      write(`[${count.skipped + count.finished}/${total}] done ${label}: ${summary} (elapsed ${formatDuration(now() - began)}, about ${eta()} left)`)
    },
    skip(n) {
      if (stopped || n <= 0) return
      count.skipped += n
      write(`[${count.skipped}/${total}] already measured (resumed)`)
    },
    stop() {
      stopped = true
    },
  }
}

function barProgress(total: number, stream: NodeJS.WritableStream, eta: () => string, count: Counts): Progress {
  const multi = new cliProgress.MultiBar({
    stream,
    format: '{bar} {value}/{total} points | elapsed {duration_formatted} | left ≈ {left} | {label}',
    hideCursor: true,
    clearOnComplete: false,
    // The caller decided this is a terminal; draw even if the stream object does not say so.
    noTTYOutput: !(stream as { isTTY?: boolean }).isTTY,
    fps: 5,
  })
  const bar = multi.create(total, 0, { label: 'starting', left: 'unknown' })
  let stopped = false
  return {
    start(label) {
      if (!stopped) bar.update({ label })
    },
    done(label, summary) {
      if (stopped) return
      count.finished++
      multi.log(`✓ ${label}: ${summary}\n`)
      bar.increment(1, { left: eta(), label: 'next point' })
      // Draw now: the log line would otherwise wait for the next scheduled frame.
      multi.update()
    },
    skip(n) {
      if (stopped || n <= 0) return
      count.skipped += n
      bar.increment(n, { label: `${count.skipped} already measured (resumed)` })
    },
    stop() {
      if (stopped) return
      stopped = true
      multi.update() // flush logged lines; stop() alone drops them
      multi.stop()
    },
  }
}
