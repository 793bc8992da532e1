/**
 * A minimal GGUF (version 3) writer: metadata key/values and F32 tensors, laid out as llama.cpp
 * reads them (little-endian; header, key/values, tensor infos, padding to `general.alignment`,
 * then each tensor's data at an aligned offset). Enough to write the test model that the llama.cpp
 * lane loads (model.ts); not a general GGUF library.
 */

/** GGUF value types (gguf_type). */
const T = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const

export type GgufValue =
  { u32: number } | { f32: number } | { bool: boolean } | { str: string } | { strings: readonly string[] } | { f32s: Float32Array } | { i32s: Int32Array }

/** One tensor: its name, its dimensions innermost first (ggml's ne[0], ne[1]), and its F32 data. */
export interface GgufTensor {
  name: string
  dims: readonly number[]
  data: Float32Array
}

const ALIGNMENT = 32
const GGML_TYPE_F32 = 0

/** Builds the header part of the file in growing chunks. */
class Out {
  private chunks: Buffer[] = []
  size = 0
  push(b: Buffer): void {
    this.chunks.push(b)
    this.size += b.length
  }
  u32(v: number): void {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(v)
    this.push(b)
  }
  i32(v: number): void {
    const b = Buffer.alloc(4)
    b.writeInt32LE(v)
    this.push(b)
  }
  u64(v: number): void {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(BigInt(v))
    this.push(b)
  }
  f32(v: number): void {
    const b = Buffer.alloc(4)
    b.writeFloatLE(v)
    this.push(b)
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8')
    this.u64(b.length)
    this.push(b)
  }
  buffers(): Buffer[] {
    return this.chunks
  }
}

function writeValue(out: Out, v: GgufValue): void {
  if ('u32' in v) {
    out.u32(T.UINT32)
    out.u32(v.u32)
  } else if ('f32' in v) {
    out.u32(T.FLOAT32)
    out.f32(v.f32)
  } else if ('bool' in v) {
    out.u32(T.BOOL)
    out.push(Buffer.from([v.bool ? 1 : 0]))
  } else if ('str' in v) {
    out.u32(T.STRING)
    out.str(v.str)
  } else if ('strings' in v) {
    out.u32(T.ARRAY)
    out.u32(T.STRING)
    out.u64(v.strings.length)
    for (const s of v.strings) out.str(s)
  } else if ('f32s' in v) {
    out.u32(T.ARRAY)
    out.u32(T.FLOAT32)
    out.u64(v.f32s.length)
    out.push(Buffer.from(v.f32s.buffer, v.f32s.byteOffset, v.f32s.byteLength))
  } else {
    out.u32(T.ARRAY)
    out.u32(T.INT32)
    out.u64(v.i32s.length)
    out.push(Buffer.from(v.i32s.buffer, v.i32s.byteOffset, v.i32s.byteLength))
  }
}

const pad = (n: number): number => (ALIGNMENT - (n % ALIGNMENT)) % ALIGNMENT

/** The whole file as a list of buffers (write them in order). */
export function ggufBuffers(kv: ReadonlyArray<readonly [string, GgufValue]>, tensors: readonly GgufTensor[]): Buffer[] {
  if (new Set(tensors.map((t) => t.name)).size !== tensors.length) throw new Error('gguf: duplicate tensor name')
  const out = new Out()
  out.push(Buffer.from('GGUF', 'ascii'))
  out.u32(3)
  out.u64(tensors.length)
  out.u64(kv.length)
  for (const [k, v] of kv) {
    out.str(k)
    writeValue(out, v)
  }
  let offset = 0
  for (const t of tensors) {
    const n = t.dims.reduce((a, b) => a * b, 1)
    if (n !== t.data.length) throw new Error(`gguf: tensor ${t.name} has ${t.data.length} values, its dims say ${n}`)
    out.str(t.name)
    out.u32(t.dims.length)
    for (const d of t.dims) out.u64(d)
    out.u32(GGML_TYPE_F32)
    out.u64(offset)
    offset += t.data.byteLength + pad(t.data.byteLength)
  }
  const parts = out.buffers()
  parts.push(Buffer.alloc(pad(out.size)))
  for (const t of tensors) {
    parts.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength))
    parts.push(Buffer.alloc(pad(t.data.byteLength)))
  }
  return parts
}
