import { spawn, type ChildProcess } from 'node:child_process'

/** CPU hogs started by `startHogs`; `stop()` kills them. */
export interface Hogs {
  readonly count: number
  stop(): void
}

/**
 * Keeps the cores busy: `count` processes that spin forever at the lowest priority (`nice -n 19`),
 * so every test process still gets the CPU it asks for, but never an idle core, and is scheduled
 * late whenever it wakes: what a loaded CI machine does to the clock of a test. Killed with the
 * calling process, also when it is stopped by SIGINT or SIGTERM.
 */
export function startHogs(count: number): Hogs {
  const hogs: ChildProcess[] = []
  for (let i = 0; i < count; i++) {
    const hog = spawn('nice', ['-n', '19', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' })
    hog.on('error', () => undefined)
    hogs.push(hog)
  }
  const stop = () => {
    for (const hog of hogs) hog.kill('SIGKILL')
  }
  const onSignal = (signal: NodeJS.Signals) => {
    forget()
    stop()
    process.kill(process.pid, signal)
  }
  const forget = () => {
    process.removeListener('exit', stop)
    process.removeListener('SIGINT', onSignal)
    process.removeListener('SIGTERM', onSignal)
  }
  process.once('exit', stop)
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  return {
    count,
    stop() {
      forget()
      stop()
    },
  }
}
