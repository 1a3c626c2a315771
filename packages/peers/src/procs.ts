import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { once } from 'node:events'

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux build we run on.
const CLOCK_TICKS = 100

/** pid -> parent pid of every process now, from /proc/<pid>/stat. */
async function parents(): Promise<Map<number, number>> {
  const out = new Map<number, number>()
  for (const entry of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (fields[1]) out.set(Number(entry), Number(fields[1]))
  }
  return out
}

/** `roots` and all their descendants now alive. */
export async function processTree(roots: readonly number[]): Promise<number[]> {
  const byParent = new Map<number, number[]>()
  for (const [pid, ppid] of await parents()) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid])
  const found: number[] = []
  const queue = [...roots]
  while (queue.length > 0) {
    const pid = queue.pop()!
    found.push(pid)
    queue.push(...(byParent.get(pid) ?? []))
  }
  return found
}

/** utime + stime (s) and resident memory (bytes) of one process; undefined when it is gone. */
async function usage(pid: number): Promise<{ cpu: number; rss: number } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // Field 24 of stat (index 21 after the command) is the resident set in pages of 4 KiB.
    return { cpu: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS, rss: Number(fields[21]) * 4096 }
  } catch {
    return undefined
  }
}

/**
 * CPU seconds and memory of a set of processes from /proc: the process trees under `roots()` (the
 * peer's server and, for Restate, its server binary; for the fleet its supervisor and services).
 * A process keeps its last CPU reading after it ends, so a group's sum never goes backwards;
 * sample during a run (the harness does, once a second). `peakRss` is the most resident memory the
 * trees held together at one sample, bytes.
 */
export function createTreeMeter(roots: () => readonly number[]) {
  const seen = new Map<number, number>()
  let peakRss = 0
  return {
    async sample(): Promise<number> {
      let rss = 0
      for (const pid of await processTree(roots())) {
        const u = await usage(pid)
        if (!u) continue
        seen.set(pid, u.cpu)
        rss += u.rss
      }
      peakRss = Math.max(peakRss, rss)
      return [...seen.values()].reduce((a, b) => a + b, 0)
    },
    get peakRss(): number {
      return peakRss
    },
  }
}

/**
 * Starts `command` and resolves once a line of its stdout or stderr matches `ready`; rejects with
 * its last output when it exits first or `timeoutMs` passes. Output is kept (the last 50 lines) for
 * that message, and echoed to stderr with `label` when `PEERS_VERBOSE` is set.
 */
export async function startProcess(
  label: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<ChildProcess> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const tail: string[] = []
  const up = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label}: not ready within ${timeoutMs} ms:\n${tail.join('\n')}`)),
      timeoutMs,
    )
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue
        tail.push(line)
        if (tail.length > 50) tail.shift()
        if (process.env.PEERS_VERBOSE) process.stderr.write(`[${label}] ${line}\n`)
        if (ready.test(line)) {
          clearTimeout(timer)
          resolve()
        }
      }
    }
    child.stdout.on('data', onLine)
    child.stderr.on('data', onLine)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${label} exited (${code}) before it was ready:\n${tail.join('\n')}`))
    })
  })
  try {
    await up
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return child
}

/** Sends SIGTERM and waits for the exit; SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}
