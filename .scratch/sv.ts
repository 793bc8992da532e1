import { startsByRound } from '../src/ab/schedule.js'
import { decidePaired, sharedStartVariance } from '../src/gate/paired.js'
import { DEFAULT_GATE_OPTIONS as OPTS } from '../src/gate/options.js'
import { createRng } from '../src/util/rng.js'
const rounds = 12
const ids = startsByRound(rounds, 'exclusive')
const starts = Array.from({ length: rounds }, (_, r) => [ids.A[r]!, ids.B[r]!] as const)
const rng = createRng(7)
let sumPlain = 0, sumShared = 0, sumTrue = 0, n = 500, ests: number[] = []
for (let t = 0; t < n; t++) {
  const oA = Array.from({ length: 8 }, () => 0.03 * rng.normal()), oB = Array.from({ length: 8 }, () => 0.03 * rng.normal())
  const pairs = Array.from({ length: rounds }, (_, r) => [20 * Math.exp(oA[ids.A[r]!]! + 0.02 * rng.normal()), 20 * Math.exp(oB[ids.B[r]!]! + 0.02 * rng.normal())] as [number, number])
  const d = (w: boolean) => decidePaired({ pairs, rounds: pairs.map((_, r) => r + 1), ...(w ? { starts } : {}), higherIsBetter: false, tolerance: 0.05 }, OPTS)
  const a = d(false), b = d(true)
  sumPlain += a.d! ** 2; ests.push(b.sigma!); sumShared += b.sigma! ** 2; sumTrue += a.sigma! ** 2
}
console.log('true var(D)', Math.sqrt(sumPlain / n), 'plain mean σ', Math.sqrt(sumTrue / n), 'shared mean σ', Math.sqrt(sumShared / n))
