/** zod schema of the `servegate.baseline/v1` file; the Baseline type in src/records/baseline.ts is the source of truth. */
import { z } from 'zod'
import { BASELINE_SCHEMA, type Baseline } from '../records/baseline.js'
import { envRecordSchema, fingerprintSchema, resultTargetSchema } from './result-schema.js'

// 0 is allowed: the bar is then the measured noise alone.
const fraction = z.number().nonnegative().max(10)
const positiveInt = z.number().int().positive()

// Unknown metric kinds in `tolerances` are errors: a typo would silently keep the default.
const tolerances = z.strictObject({
  itl_p95: fraction.optional(),
  tput_at_target: fraction.optional(),
  ttft_p95: fraction.optional(),
  tpot_p95: fraction.optional(),
  e2el_p95: fraction.optional(),
  req_tput: fraction.optional(),
  output_tput: fraction.optional(),
  goodput: fraction.optional(),
})

const metricKind = z.enum(['itl_p95', 'tput_at_target', 'ttft_p95', 'tpot_p95', 'e2el_p95', 'req_tput', 'output_tput', 'goodput'])

const refresh = z.object({
  at: z.string(),
  env: envRecordSchema,
  commit: z.string().optional(),
  runs: z.record(z.string(), z.array(z.number().nonnegative())),
  invalid: z.array(z.object({ scope: z.string(), repeat: z.number().int().nonnegative(), codes: z.array(z.string()) })),
  fingerprint: fingerprintSchema.optional(),
})

export const baselineSchema = z.object({
  schema: z.literal(BASELINE_SCHEMA),
  name: z.string().min(1),
  target: resultTargetSchema,
  profile: z.object({
    shapes: z.array(z.object({ input_len: positiveInt, output_len: positiveInt })).min(1),
    concurrency: z.array(positiveInt).min(1),
    request_rates: z
      .array(z.union([z.number().positive(), z.literal('inf')]))
      .min(1)
      .optional(),
  }),
  refreshes: z.array(refresh),
  noise_history: z.array(refresh).optional(),
  tolerances: tolerances.optional(),
  max_failed_requests: z.number().int().nonnegative().optional(),
  gated: z.array(metricKind).min(1).optional(),
})

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const schemaMatchesTypes: Equals<z.infer<typeof baselineSchema>, Baseline> = true
void schemaMatchesTypes
