/**
 * POST /v1/completions and /v1/chat/completions: check the request, plan its
 * generation and faults, then hand it to the engine once it has passed the
 * front delay (a proxy in front of the engine).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { nowNs } from './clock.js'
import type { SimContext } from './context.js'
import { planGeneration } from './generation-plan.js'
import { readJsonBody, sendError, sendThrown } from './http-util.js'
import { blockHashes } from './prefix-cache.js'
import { parseSimRequest, type SimApi, type SimRequest } from './request.js'
import { SimSequence } from './sequence.js'
import { textTokenIds } from './tokenizer.js'
import { TraceRecorder } from './trace.js'

/** Serve one generation request that arrived at `arrivalNs` (nowNs scale). */
export async function handleGenerate(ctx: SimContext, api: SimApi, req: IncomingMessage, res: ServerResponse, arrivalNs: number): Promise<void> {
  const header = req.headers['x-request-id']
  const requestId = (Array.isArray(header) ? header[0] : header) || ctx.nextRequestId()
  let sreq: SimRequest
  try {
    sreq = parseSimRequest(api, await readJsonBody(req), ctx.opts.model, ctx.maxModelLen, ctx.opts.truncatePrompt, ctx.opts.vocab)
  } catch (err) {
    sendThrown(res, err)
    return
  }
  const o = ctx.opts
  const plan = planGeneration(sreq, o, requestId)
  if (plan.fault === 'http500') {
    sendError(res, 500, 'servegate sim: injected http500 fault', null, { 'x-request-id': requestId })
    ctx.metrics.finished.error = (ctx.metrics.finished.error ?? 0) + 1
    return
  }
  if (plan.fault === 'http429') {
    sendError(res, 429, 'servegate sim: injected http429 fault (too many requests)', null, { 'x-request-id': requestId, 'retry-after': '1' })
    return
  }
  const chunksExpected = Math.ceil(plan.target / o.tokensPerChunk) + 1
  const trace = new TraceRecorder(requestId, arrivalNs, sreq.promptTokens, chunksExpected)
  trace.fault = plan.fault
  ctx.traces.add(trace)
  const seq = new SimSequence(requestId, sreq, plan, res, trace, ctx.metrics, o, Math.floor(Date.now() / 1000))
  if (o.prefixCache) seq.blockHashes = blockHashes(sreq.promptIds ?? textTokenIds(sreq.promptText ?? ''), ctx.blockSize)

  const enter = (engineArrivalNs: number): void => {
    if (seq.done) return
    trace.engineArrivalNs = engineArrivalNs
    if (ctx.detCache && seq.blockHashes) {
      const hit = ctx.detCache.hitTokens(ctx.detCache.lookup(seq.blockHashes), sreq.promptTokens)
      ctx.metrics.prefixQueries += sreq.promptTokens
      ctx.metrics.prefixHits += hit
      ctx.detCache.insert(seq.blockHashes)
    }
    seq.open()
    ctx.engine.submit(seq)
  }
  const delayNs = o.frontDelayMs * o.timeScale * 1e6
  if (delayNs <= 0) {
    enter(nowNs())
    return
  }
  // The engine clock starts at the intended hand-over time, so client minus server TTFT is the delay itself.
  const intended = arrivalNs + delayNs
  const timer = setTimeout(
    () => {
      ctx.pending.delete(timer)
      enter(intended)
    },
    (intended - nowNs()) / 1e6,
  )
  ctx.pending.add(timer)
}
