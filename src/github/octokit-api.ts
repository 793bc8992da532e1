/**
 * The real CommentsApi over @actions/github's Octokit (REST, paginated by Link
 * headers). The base URL comes from GITHUB_API_URL, so GitHub Enterprise Server
 * and the tests' stand-in server both work.
 */
import { getOctokit } from '@actions/github'
import type { CommentsApi, CommentIdentity, IssueComment } from './sticky-comment.js'
import { WORKFLOW_TOKEN_IDENTITY } from './sticky-comment.js'

type Octokit = ReturnType<typeof getOctokit>

/** Comments on issues of `owner/repo` through Octokit, 100 per page. */
export function octokitComments(octokit: Octokit, owner: string, repo: string): CommentsApi {
  return {
    async *listComments(issueNumber: number): AsyncIterable<IssueComment[]> {
      const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, { owner, repo, issue_number: issueNumber, per_page: 100 })
      for await (const page of pages) yield page.data as IssueComment[]
    },
    async createComment(issueNumber: number, body: string): Promise<IssueComment> {
      const res = await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body })
      return res.data as IssueComment
    },
    async updateComment(commentId: number, body: string): Promise<IssueComment> {
      const res = await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body })
      return res.data as IssueComment
    },
  }
}

// Personal and user-to-server tokens can ask who they are; the workflow token (ghs_) cannot (GET /user is 403).
const USER_TOKEN = /^(ghp_|github_pat_|gho_|ghu_)/

/** Whose comments are ours: the token's user for personal tokens, github-actions[bot] otherwise. */
export async function tokenIdentity(octokit: Octokit, token: string, warn: (msg: string) => void): Promise<CommentIdentity> {
  if (!USER_TOKEN.test(token)) return WORKFLOW_TOKEN_IDENTITY
  try {
    const me = await octokit.rest.users.getAuthenticated()
    return { login: me.data.login, type: me.data.type === 'Bot' ? 'Bot' : 'User' }
  } catch {
    warn('servegate could not ask GitHub who the github-token belongs to; it will look for comments by github-actions[bot].')
    return WORKFLOW_TOKEN_IDENTITY
  }
}
