/**
 * What will happen to one request, decided when it arrives and seeded by the
 * server seed and the request id (so a rerun with the same ids reproduces it):
 * how many tokens it generates, why it stops, and which fault it suffers.
 */
import { createRng, deriveSeed } from '../util/rng.js'
import type { FaultKind, SimOptions, TailFaultKind } from './options.js'
import type { SimRequest } from './request.js'

export interface GenerationPlan {
  /** Tokens to generate. */
  target: number
  finishReason: 'length' | 'stop'
  fault: FaultKind | null
  /** Mid-stream faults strike (tail faults take the stream over) once this many tokens were sent. */
  faultAt: number
}

/**
 * Content tokens a stream sends normally before a tail fault takes it over
 * (capped at the planned length); `overrun` sends every planned token first,
 * then keeps going.
 */
const TAIL_FAULT_AFTER: Record<Exclude<TailFaultKind, 'overrun'>, number> = {
  keepalive: 3,
  trickle: 1,
  'huge-line': 5,
}

function faultAtFor(fault: FaultKind | null, target: number): number {
  if (fault === 'overrun') return target
  if (fault === 'keepalive' || fault === 'trickle' || fault === 'huge-line') return Math.min(TAIL_FAULT_AFTER[fault], target)
  return Math.floor(target / 2)
}

/** Decide length, finish reason and fault for one request. */
export function planGeneration(
  req: Pick<SimRequest, 'maxTokens' | 'ignoreEos'>,
  opts: Pick<SimOptions, 'seed' | 'faults' | 'stopEarlyAt'>,
  requestId: string,
): GenerationPlan {
  let target = req.maxTokens
  let finishReason: 'length' | 'stop' = 'length'
  if (!req.ignoreEos) {
    // Without ignore_eos a model stops when it emits EOS: a seeded length in [1, max_tokens].
    const eos = createRng(deriveSeed(opts.seed, 'eos', requestId)).int(1, req.maxTokens)
    if (eos < target) {
      target = eos
      finishReason = 'stop'
    }
  }
  if (opts.stopEarlyAt !== null && opts.stopEarlyAt < target) {
    target = opts.stopEarlyAt
    finishReason = 'stop'
  }
  let fault: FaultKind | null = null
  if (opts.faults.length > 0) {
    const rng = createRng(deriveSeed(opts.seed, 'fault', requestId))
    for (const f of opts.faults) {
      if (rng.next() < f.rate) {
        fault = f.kind
        break
      }
    }
  }
  return { target, finishReason, fault, faultAt: faultAtFor(fault, target) }
}
