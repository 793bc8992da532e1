/**
 * A small evaluator for GitHub Actions expressions, enough to run a workflow's
 * `if:` and `concurrency:` expressions against sample event payloads: literals,
 * context paths (`github.event.pull_request.head.repo.full_name`), `== != < <= > >=`,
 * `! && ||`, parentheses, and the functions `always() success() failure()
 * cancelled() format() contains() startsWith() endsWith() fromJSON()`.
 * Semantics follow GitHub's: a missing property is null; `&&`/`||` return an
 * operand; string comparison ignores case; mixed types compare as numbers.
 */

export type Value = null | boolean | number | string | Value[] | { [k: string]: Value }
export interface Contexts {
  [name: string]: Value
}
export interface JobStatus {
  /** What `success()`, `failure()`, `cancelled()` see; default: everything so far succeeded. */
  status?: 'success' | 'failure' | 'cancelled'
}

type Tok = { t: 'num'; v: number } | { t: 'str'; v: string } | { t: 'id'; v: string } | { t: 'op'; v: string }

function tokenize(src: string): Tok[] {
  const out: Tok[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i] as string
    if (/\s/.test(c)) {
      i++
      continue
    }
    if (c === "'") {
      let s = ''
      i++
      for (;;) {
        if (i >= src.length) throw new Error(`unterminated string in ${src}`)
        if (src[i] === "'" && src[i + 1] === "'") {
          s += "'"
          i += 2
          continue
        }
        if (src[i] === "'") {
          i++
          break
        }
        s += src[i]
        i++
      }
      out.push({ t: 'str', v: s })
      continue
    }
    const two = src.slice(i, i + 2)
    if (['==', '!=', '<=', '>=', '&&', '||'].includes(two)) {
      out.push({ t: 'op', v: two })
      i += 2
      continue
    }
    if ('!<>()[],.*'.includes(c)) {
      out.push({ t: 'op', v: c })
      i++
      continue
    }
    const num = /^-?(0x[0-9a-f]+|\d+(\.\d+)?(e[+-]?\d+)?)/i.exec(src.slice(i))
    if (num && (out.length === 0 || out[out.length - 1]?.t === 'op')) {
      out.push({ t: 'num', v: Number(num[0]) })
      i += num[0].length
      continue
    }
    const id = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(i))
    if (id) {
      out.push({ t: 'id', v: id[0] })
      i += id[0].length
      continue
    }
    throw new Error(`cannot read "${src.slice(i)}" in ${src}`)
  }
  return out
}

function truthy(v: Value): boolean {
  return !(v === null || v === false || v === 0 || v === '' || (typeof v === 'number' && Number.isNaN(v)))
}

function toNumber(v: Value): number {
  if (v === null) return 0
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'number') return v
  if (typeof v === 'string') return v.trim() === '' ? 0 : Number(v)
  return Number.NaN
}

function compare(a: Value, b: Value): number | null {
  if (typeof a === 'string' && typeof b === 'string') {
    const x = a.toLowerCase()
    const y = b.toLowerCase()
    return x < y ? -1 : x > y ? 1 : 0
  }
  if (typeof a === 'object' && a !== null) return a === b ? 0 : null
  if (typeof b === 'object' && b !== null) return null
  if (a === null && b === null) return 0
  const x = toNumber(a)
  const y = toNumber(b)
  if (Number.isNaN(x) || Number.isNaN(y)) return null
  return x < y ? -1 : x > y ? 1 : 0
}

function str(v: Value): string {
  if (v === null) return ''
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

class Parser {
  private i = 0
  constructor(
    private readonly toks: Tok[],
    private readonly ctx: Contexts,
    private readonly job: JobStatus,
  ) {}

  parse(): Value {
    const v = this.or()
    if (this.i !== this.toks.length) throw new Error(`unexpected ${JSON.stringify(this.toks[this.i])}`)
    return v
  }

  private peek(v: string): boolean {
    const t = this.toks[this.i]
    return t !== undefined && t.t === 'op' && t.v === v
  }

  private expect(v: string): void {
    if (!this.peek(v)) throw new Error(`expected ${v} at token ${this.i}`)
    this.i++
  }

  private or(): Value {
    let left = this.and()
    while (this.peek('||')) {
      this.i++
      const right = this.and()
      left = truthy(left) ? left : right
    }
    return left
  }

  private and(): Value {
    let left = this.cmp()
    while (this.peek('&&')) {
      this.i++
      const right = this.cmp()
      left = truthy(left) ? right : left
    }
    return left
  }

  private cmp(): Value {
    let left = this.unary()
    for (;;) {
      const t = this.toks[this.i]
      if (t?.t !== 'op' || !['==', '!=', '<', '<=', '>', '>='].includes(t.v)) return left
      this.i++
      const right = this.unary()
      const c = compare(left, right)
      switch (t.v) {
        case '==':
          left = c === 0
          break
        case '!=':
          left = c !== 0
          break
        case '<':
          left = c !== null && c < 0
          break
        case '<=':
          left = c !== null && c <= 0
          break
        case '>':
          left = c !== null && c > 0
          break
        default:
          left = c !== null && c >= 0
      }
    }
  }

  private unary(): Value {
    if (this.peek('!')) {
      this.i++
      return !truthy(this.unary())
    }
    return this.postfix(this.primary())
  }

  private postfix(base: Value): Value {
    let v = base
    for (;;) {
      if (this.peek('.')) {
        this.i++
        const t = this.toks[this.i++]
        if (t?.t !== 'id') throw new Error('expected a property name after .')
        v = prop(v, t.v)
      } else if (this.peek('[')) {
        this.i++
        const k = this.or()
        this.expect(']')
        v = prop(v, str(k))
      } else return v
    }
  }

  private primary(): Value {
    const t = this.toks[this.i++]
    if (t === undefined) throw new Error('unexpected end of expression')
    if (t.t === 'num' || t.t === 'str') return t.v
    if (t.t === 'op' && t.v === '(') {
      const v = this.or()
      this.expect(')')
      return v
    }
    if (t.t !== 'id') throw new Error(`unexpected ${t.v}`)
    if (t.v === 'true') return true
    if (t.v === 'false') return false
    if (t.v === 'null') return null
    if (this.peek('(')) return this.call(t.v)
    return Object.hasOwn(this.ctx, t.v) ? (this.ctx[t.v] as Value) : null
  }

  private call(name: string): Value {
    this.expect('(')
    const args: Value[] = []
    while (!this.peek(')')) {
      args.push(this.or())
      if (this.peek(',')) this.i++
    }
    this.expect(')')
    const status = this.job.status ?? 'success'
    switch (name.toLowerCase()) {
      case 'always':
        return true
      case 'success':
        return status === 'success'
      case 'failure':
        return status === 'failure'
      case 'cancelled':
        return status === 'cancelled'
      case 'format': {
        const [fmt, ...rest] = args
        return str(fmt ?? null).replace(/\{(\d+)\}/g, (_, n: string) => str(rest[Number(n)] ?? null))
      }
      case 'contains': {
        const [hay, needle] = args
        if (Array.isArray(hay)) return hay.some((x) => compare(x, needle ?? null) === 0)
        return str(hay ?? null)
          .toLowerCase()
          .includes(str(needle ?? null).toLowerCase())
      }
      case 'startswith':
        return str(args[0] ?? null)
          .toLowerCase()
          .startsWith(str(args[1] ?? null).toLowerCase())
      case 'endswith':
        return str(args[0] ?? null)
          .toLowerCase()
          .endsWith(str(args[1] ?? null).toLowerCase())
      case 'fromjson':
        return JSON.parse(str(args[0] ?? null)) as Value
      default:
        throw new Error(`function ${name}() is not supported by this evaluator`)
    }
  }
}

function prop(v: Value, key: string): Value {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null
  const hit = Object.keys(v).find((k) => k.toLowerCase() === key.toLowerCase())
  return hit === undefined ? null : (v[hit] as Value)
}

/** Evaluate one expression (without `${{ }}`). */
export function evaluate(expr: string, ctx: Contexts, job: JobStatus = {}): Value {
  return new Parser(tokenize(expr), ctx, job).parse()
}

/** An `if:` value: GitHub wraps a bare expression in `${{ }}` and evaluates it as a boolean. */
export function evaluateIf(cond: unknown, ctx: Contexts, job: JobStatus = {}): boolean {
  if (cond === undefined || cond === null) return job.status === undefined || job.status === 'success'
  if (typeof cond === 'boolean') return cond
  const text = String(cond).trim()
  const inner = /^\$\{\{([\s\S]*)\}\}$/.exec(text)
  return truthy(evaluate(inner ? (inner[1] as string) : text, ctx, job))
}

/** A string with `${{ expr }}` parts, as in `concurrency.group` or an artifact name. */
export function interpolate(template: string, ctx: Contexts, job: JobStatus = {}): string {
  return template.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) => str(evaluate(e, ctx, job)))
}

/** A value that may be a whole `${{ expr }}` (e.g. `cancel-in-progress`), as the value it evaluates to. */
export function evaluateValue(v: unknown, ctx: Contexts, job: JobStatus = {}): Value {
  if (typeof v !== 'string') return (v ?? null) as Value
  const inner = /^\s*\$\{\{([\s\S]*)\}\}\s*$/.exec(v)
  return inner ? evaluate(inner[1] as string, ctx, job) : v
}

/** Whether a glob, as download-artifact's `pattern` reads it (only `*` is used in the examples), matches an artifact name. */
export function globMatches(glob: string, name: string): boolean {
  return new RegExp(
    `^${glob
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(name)
}
