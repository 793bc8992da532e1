/** A binary min-heap of items ordered by a numeric key read from each item. */
export class MinHeap<T> {
  private readonly items: T[] = []

  constructor(private readonly key: (item: T) => number) {}

  get size(): number {
    return this.items.length
  }

  /** The smallest item, without removing it. */
  peek(): T | undefined {
    return this.items[0]
  }

  push(item: T): void {
    const a = this.items
    a.push(item)
    let i = a.length - 1
    const k = this.key(item)
    while (i > 0) {
      const p = (i - 1) >> 1
      const parent = a[p] as T
      if (this.key(parent) <= k) break
      a[i] = parent
      i = p
    }
    a[i] = item
  }

  pop(): T | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (a.length === 0 || last === undefined) return top
    let i = 0
    const k = this.key(last)
    const n = a.length
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      const c = r < n && this.key(a[r] as T) < this.key(a[l] as T) ? r : l
      if (this.key(a[c] as T) >= k) break
      a[i] = a[c] as T
      i = c
    }
    a[i] = last
    return top
  }

  clear(): void {
    this.items.length = 0
  }
}
