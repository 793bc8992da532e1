/**
 * A small stand-in for GitHub's REST API on 127.0.0.1:0: issue comments
 * (paginated with Link headers), create, update, GET /user; issues (list by
 * state, paginated; create, edit, close). Records every call and can be told
 * to answer errors (403 on forks, 429 rate limits, 5xx).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeUser {
  login: string
  type: 'Bot' | 'User'
}

export interface FakeComment {
  id: number
  issue: number
  body: string
  user: FakeUser
}

export interface FakeIssue {
  number: number
  title: string
  body: string
  state: 'open' | 'closed'
  state_reason: string | null
  user: FakeUser
  /** A pull request (the issues list returns those too). */
  isPullRequest: boolean
}

export interface RecordedCall {
  method: string
  path: string
  query: Record<string, string>
  body: unknown
  authorization: string | undefined
}

export interface Failure {
  status: number
  /** Only calls with this method fail (default: every call). */
  method?: string
  /** How many calls fail before answering normally again (default: all). */
  times?: number
  /** Response headers (default for 429: retry-after 60, x-ratelimit-remaining 0). */
  headers?: Record<string, string>
  /** The error message GitHub would send (default by status). */
  message?: string
  /** Carry out the request, then answer the failure anyway (GitHub stored the comment, the proxy answered 502). */
  afterApply?: boolean
}

export interface FakeGitHub {
  url: string
  calls: RecordedCall[]
  comments: FakeComment[]
  /** Issues and pull requests of the repository, numbered from 1. */
  issues: FakeIssue[]
  /** Who the token authenticates as: the author of created comments and GET /user. */
  actor: FakeUser
  /** Largest page the server returns, whatever per_page asks (to exercise pagination). */
  maxPerPage: number
  addComment(issue: number, body: string, user: FakeUser): FakeComment
  addIssue(i: { title?: string; body: string; user: FakeUser; state?: 'open' | 'closed'; isPullRequest?: boolean }): FakeIssue
  fail(f: Failure | null): void
  /** Failures answered in turn, each for its `times` calls (default 1), before normal answers resume. */
  failInTurn(fs: Failure[]): void
  close(): Promise<void>
}

const BOT: FakeUser = { login: 'github-actions[bot]', type: 'Bot' }

/** Start the fake API; `close()` stops it. */
export async function startFakeGitHub(opts: { maxPerPage?: number; actor?: FakeUser } = {}): Promise<FakeGitHub> {
  let nextId = 1000
  let failure: Failure | null = null
  let queue: Failure[] = []
  const server = createServer()
  const fake: FakeGitHub = {
    url: '',
    calls: [],
    comments: [],
    issues: [],
    actor: opts.actor ?? BOT,
    maxPerPage: opts.maxPerPage ?? 100,
    addComment(issue, body, user) {
      const c = { id: nextId++, issue, body, user }
      fake.comments.push(c)
      return c
    },
    addIssue(i) {
      const issue: FakeIssue = {
        number: fake.issues.length + 1,
        title: i.title ?? 'issue',
        body: i.body,
        state: i.state ?? 'open',
        state_reason: null,
        user: i.user,
        isPullRequest: i.isPullRequest ?? false,
      }
      fake.issues.push(issue)
      return issue
    },
    fail(f) {
      failure = f
      queue = []
    },
    failInTurn(fs) {
      queue = fs.map((f) => ({ times: 1, ...f }))
      failure = queue.shift() ?? null
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }

  const view = (c: FakeComment) => ({
    id: c.id,
    body: c.body,
    user: { login: c.user.login, type: c.user.type },
    html_url: `https://github.test/o/r/issues/${c.issue}#issuecomment-${c.id}`,
  })

  const issueView = (i: FakeIssue) => ({
    number: i.number,
    title: i.title,
    body: i.body,
    state: i.state,
    state_reason: i.state_reason,
    user: { login: i.user.login, type: i.user.type },
    html_url: `https://github.test/o/r/${i.isPullRequest ? 'pull' : 'issues'}/${i.number}`,
    ...(i.isPullRequest ? { pull_request: { url: `https://api.github.test/o/r/pulls/${i.number}` } } : {}),
  })

  /** One page of `all` as GitHub answers it, with Link headers to the others. */
  const paged = <T>(u: URL, all: readonly T[]): { items: T[]; headers: Record<string, string> } => {
    const perPage = Math.min(Number(u.searchParams.get('per_page') ?? 30), fake.maxPerPage)
    const page = Number(u.searchParams.get('page') ?? 1)
    const last = Math.max(1, Math.ceil(all.length / perPage))
    const links: string[] = []
    const at = (p: number) => {
      const l = new URL(u.href)
      l.searchParams.set('per_page', String(perPage))
      l.searchParams.set('page', String(p))
      return l.href
    }
    if (page < last) links.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`)
    if (page > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(page - 1)}>; rel="prev"`)
    return { items: all.slice((page - 1) * perPage, page * perPage), headers: links.length > 0 ? { link: links.join(', ') } : {} }
  }

  const send = (res: ServerResponse | null, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res === null) return
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
    res.end(JSON.stringify(body))
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (d: string) => (raw += d))
    req.on('end', () => {
      const u = new URL(req.url ?? '/', fake.url)
      const body = raw === '' ? undefined : (JSON.parse(raw) as unknown)
      fake.calls.push({ method: req.method ?? '', path: u.pathname, query: Object.fromEntries(u.searchParams), body, authorization: req.headers.authorization })
      if (failure !== null && (failure.method === undefined || failure.method === req.method)) {
        const f = failure
        if (f.times !== undefined && --f.times <= 0) failure = queue.shift() ?? null
        const headers: Record<string, string> = f.headers ?? (f.status === 429 ? { 'retry-after': '60', 'x-ratelimit-remaining': '0' } : {})
        const message =
          f.message ?? (f.status === 403 ? 'Resource not accessible by integration' : f.status === 429 ? 'API rate limit exceeded' : 'Server Error')
        if (f.afterApply === true) route(req.method ?? '', u, body, null)
        return send(res, f.status, { message }, headers)
      }
      route(req.method ?? '', u, body, res)
    })
  })

  // `res` null: carry the request out without answering (the answer is a failure sent by the caller).
  function route(method: string, u: URL, body: unknown, res: ServerResponse | null): void {
    const list = u.pathname.match(/^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/)
    const one = u.pathname.match(/^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/)
    if (method === 'GET' && u.pathname === '/user') return send(res, 200, fake.actor)
    if (list && method === 'GET') {
      const p = paged(
        u,
        fake.comments.filter((c) => c.issue === Number(list[3])),
      )
      return send(res, 200, p.items.map(view), p.headers)
    }
    const issues = u.pathname.match(/^\/repos\/([^/]+)\/([^/]+)\/issues$/)
    const issue = u.pathname.match(/^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/)
    if (issues && method === 'GET') {
      const state = u.searchParams.get('state') ?? 'open'
      const p = paged(
        u,
        fake.issues.filter((i) => state === 'all' || i.state === state),
      )
      return send(res, 200, p.items.map(issueView), p.headers)
    }
    if (issues && method === 'POST') {
      const b = (body ?? {}) as { title?: unknown; body?: unknown }
      if (typeof b.title !== 'string' || b.title === '') return send(res, 422, { message: 'title is required' })
      if (typeof b.body === 'string' && b.body.length > 65536) return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' })
      return send(res, 201, issueView(fake.addIssue({ title: b.title, body: typeof b.body === 'string' ? b.body : '', user: fake.actor })))
    }
    if (issue && method === 'PATCH') {
      const i = fake.issues.find((x) => x.number === Number(issue[3]))
      if (i === undefined) return send(res, 404, { message: 'Not Found' })
      const b = (body ?? {}) as { title?: unknown; body?: unknown; state?: unknown; state_reason?: unknown }
      if (typeof b.body === 'string' && b.body.length > 65536) return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' })
      if (typeof b.title === 'string') i.title = b.title
      if (typeof b.body === 'string') i.body = b.body
      if (b.state === 'open' || b.state === 'closed') i.state = b.state
      if (typeof b.state_reason === 'string') i.state_reason = b.state_reason
      return send(res, 200, issueView(i))
    }
    if (list && method === 'POST') {
      const text = (body as { body?: unknown } | undefined)?.body
      if (typeof text !== 'string') return send(res, 422, { message: 'body is required' })
      if (text.length > 65536) return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' })
      return send(res, 201, view(fake.addComment(Number(list[3]), text, fake.actor)))
    }
    if (one && method === 'PATCH') {
      const c = fake.comments.find((x) => x.id === Number(one[3]))
      const text = (body as { body?: unknown } | undefined)?.body
      if (c === undefined) return send(res, 404, { message: 'Not Found' })
      if (typeof text !== 'string') return send(res, 422, { message: 'body is required' })
      if (text.length > 65536) return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' })
      // GitHub lets only the author (or an admin) edit; servegate must never try anyone else's.
      if (c.user.login !== fake.actor.login) return send(res, 403, { message: 'Must have admin rights to Repository.' })
      c.body = text
      return send(res, 200, view(c))
    }
    send(res, 404, { message: 'Not Found' })
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}
