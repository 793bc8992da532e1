/**
 * servegate's one-way rule (CONTRIBUTING.md, "The map"): data flows
 * config → plan → load → records/types → metrics → analysis → gate → report,
 * each stage importing only stages to its left; I/O lives at the edges
 * (client, env, store, serve, github, sim, sweep, ab, cli, the Action's entries).
 * Type-only imports count (tsPreCompilationDeps).
 */
const STAGES = ['config', 'plan', 'load', 'records', 'metrics', 'analysis', 'gate', 'report']
const EDGES = ['client', 'env', 'store', 'serve', 'github', 'sim', 'sweep', 'ab', 'cli', 'formats']
const dir = (names) => `^src/(${names.join('|')})/`
const PURE = ['metrics', 'analysis', 'gate', 'report']
// The unit lane of the tests (vitest.config.ts) runs in parallel: its files may reach no server, process or worker.
const UNIT_LANE = require('./test/unit-lane.json').files
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const leftwards = STAGES.map((stage, i) => ({
  name: `${stage}-imports-leftwards`,
  comment: `${stage} may import only stages to its left (${STAGES.slice(0, i).join(', ') || 'none'}), util and the shared types`,
  severity: 'error',
  from: { path: dir([stage]) },
  to: { path: STAGES.length > i + 1 ? dir(STAGES.slice(i + 1)) : '^$' },
}))

const never = (name, from, to, comment) => ({ name, comment, severity: 'error', from: { path: dir(from) }, to: { path: dir(to) } })

module.exports = {
  forbidden: [
    ...leftwards.filter((r) => r.to.path !== '^$'),
    {
      name: 'stages-import-no-edge',
      comment:
        'A stage never reaches an edge: the edges (I/O) call the stages, not the other way round. load drives requests through the client, its one edge.',
      severity: 'error',
      from: { path: dir(STAGES), pathNot: '^src/load/' },
      to: { path: [dir(EDGES), '^src/(action|action-main|action-post|action-post-main|cli)\\.ts$'] },
    },
    {
      name: 'load-reaches-only-the-client',
      comment: 'load sends requests through the client and nothing else of the edges.',
      severity: 'error',
      from: { path: '^src/load/' },
      to: { path: [dir(EDGES.filter((e) => e !== 'client')), '^src/(action|action-main|action-post|action-post-main|cli)\\.ts$'] },
    },
    {
      name: 'pure-stages-no-node',
      comment: 'metrics, analysis, gate and report are pure: no node: module (files, network, processes, clocks), so they are tested exhaustively without I/O.',
      severity: 'error',
      from: { path: dir(PURE) },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'pure-stages-no-io-packages',
      comment: 'Pure stages use no package that does I/O or draws on a terminal.',
      severity: 'error',
      from: { path: dir(PURE) },
      to: { path: '^node_modules/(undici|cli-progress|@actions|@octokit|playwright-core)/' },
    },
    never('pure-stages-not-load', PURE, ['load'], 'load runs requests with workers and timers: the pure stages take its records, never its code.'),
    never(
      'store-not-gate',
      ['store'],
      ['gate', 'analysis', 'report'],
      'The store reads and writes files; what a refresh holds is built by the gate (gate/refresh.ts), the types both share are records/.',
    ),
    never('client-not-sim', ['client'], ['sim'], 'The client talks to any server; it knows nothing of the simulator.'),
    never(
      'sim-not-gate',
      ['sim'],
      ['gate', 'analysis', 'report', 'github', 'store'],
      'The simulator is a server like any other: it knows nothing of how it is judged.',
    ),
    never('serve-not-gate', ['serve'], ['gate', 'analysis', 'report', 'github'], 'Starting an engine knows nothing of the verdict.'),
    never(
      'formats-not-client-or-sweep',
      ['formats'],
      ['client', 'sweep', 'github', 'cli'],
      "Formats map other tools' files to and from servegate's: no network, no sweep.",
    ),
    never('util-is-a-leaf', ['util'], [...STAGES, ...EDGES], 'util holds helpers every stage may import, so it imports none of them.'),
    {
      name: 'unit-lane-does-no-io',
      comment:
        'A test in test/unit-lane.json runs beside others in parallel, so it starts no server, process or worker: move it to the integration lane (drop it from the list) if it must.',
      severity: 'error',
      from: { path: `^(${UNIT_LANE.map(escapeRe).join('|')})$` },
      to: {
        reachable: true,
        path: [
          '^src/(sim/server|serve/|load/|client/|sweep/|env/exec|ab/run-ab|github/real-deps)',
          '^src/(cli|action)\\.ts$',
          '^node_modules/(playwright-core|undici)/',
          '^(node:)?(child_process|http|https|net|worker_threads)$',
        ],
      },
    },
    {
      name: 'unit-lane-starts-nothing',
      comment: 'The same rule for node modules a unit test would import itself.',
      severity: 'error',
      from: { path: `^(${UNIT_LANE.map(escapeRe).join('|')})$` },
      to: { dependencyTypes: ['core'], path: '^(node:)?(child_process|http|https|net|worker_threads|dgram|cluster)$' },
    },
    {
      name: 'no-circular',
      comment: 'A cycle of modules has no direction.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The llama lane's engine kit is a package of its own (its own lock and node_modules, installed
    // by the lane's setup, so absent when lint runs on a fresh clone); its imports are its own.
    exclude: { path: '^test/llama/kit/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
}
