import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { REDACTED, redactSecrets, secretValuesFromEnv } from '../../src/util/redact.js'

const SK = 'sk-proj-Abc123xyz789Def456'
const HF = 'hf_AbCdEfGhIjKlMnOpQrStUv'
const GHS = 'ghs_16C7e42F292c6912E7710c838347Ae178B4a'

describe('redactSecrets', () => {
  it.each([
    ['--api-key value', `vllm serve m --api-key ${SK} --port 8000`, `vllm serve m --api-key *** --port 8000`],
    ['--api-key=value', `vllm serve m --api-key=${SK}`, `vllm serve m --api-key=***`],
    ['--token', 'tool --token abcdefgh', 'tool --token ***'],
    ['--hf-token', 'vllm serve m --hf-token "x y z" -tp 2', 'vllm serve m --hf-token "***" -tp 2'],
    ['--password', "db --password='hunter22'", "db --password='***'"],
    ['--client-secret', 'auth --client-secret s3cr3t', 'auth --client-secret ***'],
    ['NAME_TOKEN=', `HF_TOKEN=${HF} vllm serve m`, 'HF_TOKEN=*** vllm serve m'],
    [
      'docker -e NAME=',
      'docker run -e HUGGING_FACE_HUB_TOKEN=abc123 -e OPENAI_API_KEY=k-1234 img',
      'docker run -e HUGGING_FACE_HUB_TOKEN=*** -e OPENAI_API_KEY=*** img',
    ],
    ['_SECRET and _PASSWORD', 'AWS_SECRET=x1 DB_PASSWORD="p w"', 'AWS_SECRET=*** DB_PASSWORD="***"'],
    ['Bearer', 'curl -H "Authorization: Bearer abc.def-123"', 'curl -H "Authorization: Bearer ***"'],
    ['Authorization: token', 'authorization: token 0123456789abcdef', 'authorization: token ***'],
    ['URL userinfo', 'pull https://alice:pa55@registry.example/img:1', 'pull https://***@registry.example/img:1'],
    ['token-like query', 'GET http://h/x?api_key=abc&page=2&access_token=zzz', 'GET http://h/x?api_key=***&page=2&access_token=***'],
    ['JSON field', `--hf-overrides '{"hf_token": "abc", "x": 1}'`, `--hf-overrides '{"hf_token": "***", "x": 1}'`],
    ['sk- shape', `key is ${SK}.`, 'key is ***.'],
    ['hf_ shape', `(${HF})`, '(***)'],
    ['ghs_ shape', `token ${GHS} leaked`, 'token *** leaked'],
    ['github_pat_ shape', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnop', '***'],
    ['nvapi- shape', 'key nvapi-Ab3_dEf-0123456789abcdefghijKLMNOP.', 'key ***.'],
    ['--…-pw and --…-pat', 'serve --admin-pw hunter2hunter2 --ngc-pat nvapi-0123456789abcdefghijklmn', 'serve --admin-pw *** --ngc-pat ***'],
    ['--pass and _PASS', 'db --pass abcdefgh && SMTP_PASS=abcdefgh mail', 'db --pass *** && SMTP_PASS=*** mail'],
    ["curl's -u user:pass", 'curl -u admin:hunter2hunter2 http://h/health', 'curl -u admin:*** http://h/health'],
    ["curl's --user=user:pass", 'curl -s --user="admin:hunter2" http://h/', 'curl -s --user="admin:***" http://h/'],
    ['-p after a login verb', 'docker login -u bench -p s3cretpassw0rd nvcr.io && vllm serve m', 'docker login -u bench -p *** nvcr.io && vllm serve m'],
  ])('redacts %s', (_name, input, expected) => {
    expect(redactSecrets(input)).toBe(expected)
  })

  it.each([
    ['vllm serve org/m --tokenizer org/tok --max-num-batched-tokens 8192 --max-tokens 16 --ssl-keyfile /k.pem'],
    ['python -m sglang.launch_server --model-path m --tp 2 --disable-radix-cache'],
    ['docker run -u 1000:1000 -p 8000:8000 img --pattern x --passthrough --path /p'],
    ['sh -c "login; ls -p /x" && PATH=/usr/bin:/bin'],
    ['sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'],
    ['max_tokens=512 disk-usage task-1234567890abc hf_transfer_enabled=1'],
    ['http://127.0.0.1:8000/v1'],
  ])('leaves ordinary serve commands alone: %s', (text) => {
    expect(redactSecrets(text)).toBe(text)
  })

  it('replaces every occurrence of a known secret, longest first, wherever it sits', () => {
    expect(redactSecrets('a=k3y-v4lue; b=prefix-k3y-v4lue-suffix; k3y-v4lue-x2', ['k3y-v4lue-x2', 'k3y-v4lue'])).toBe('a=***; b=prefix-***-suffix; ***')
  })

  it('ignores known secrets too short to replace safely (under 8 characters), and nulls', () => {
    expect(redactSecrets('a b c 1234567', ['a', '1234567', null, undefined, ''])).toBe('a b c 1234567')
  })

  it('keeps a following flag when a secret flag has no value', () => {
    expect(redactSecrets('serve --api-key --port 8000')).toBe('serve --api-key --port 8000')
  })

  it('never lets a known secret through, whatever surrounds it, and is idempotent', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9_-]{8,24}$/)
    const text = fc.string({ unit: fc.constantFrom('a', ' ', '=', '-', '/', '"', "'", ':', '@', '?', '&', 'K', '_', '1') })
    fc.assert(
      fc.property(secret, text, text, (s, before, after) => {
        const out = redactSecrets(`${before}${s}${after}`, [s])
        expect(out).not.toContain(s)
        expect(redactSecrets(out, [s])).toBe(out)
      }),
    )
  })

  it('writes the redaction mark as three asterisks', () => {
    expect(REDACTED).toBe('***')
  })
})

describe('secretValuesFromEnv', () => {
  it("takes values of secret-named variables and the Action's token inputs, not ordinary ones", () => {
    const env = {
      OPENAI_API_KEY: 'sk-0123456789',
      HF_TOKEN: 'hf_0123456789',
      'INPUT_GITHUB-TOKEN': 'ghs_0123456789',
      DB_PASSWORD: 'correct horse',
      PATH: '/usr/bin:/bin',
      MAX_TOKENS: '123456789',
      SHORT_TOKEN: 'abc',
    }
    expect(secretValuesFromEnv(env).sort()).toEqual(['correct horse', 'ghs_0123456789', 'hf_0123456789', 'sk-0123456789'])
  })
})

describe('a report redacted twice', () => {
  it('keeps a redaction markdown escaped as it is, so a table shows \\*\\*\\* and not an emphasis marker', () => {
    const escaped = String.raw`| HF\_TOKEN=\*\*\* vllm serve m --api-key \*\*\* -H "Authorization: Bearer \*\*\*" |`
    expect(redactSecrets(escaped)).toBe(escaped)
    // A value that is not a redaction is still replaced.
    expect(redactSecrets(String.raw`HF\_TOKEN=\*\*\* --api-key=hunter22222`)).toBe(String.raw`HF\_TOKEN=\*\*\* --api-key=***`)
  })
})
