// CPU priority of the background roles of a single-machine install (store engine, worker). The web role
// answers clients and its 200 means "durably queued", so on a shared machine it gets the CPU first and the
// queue absorbs bursts; the writers catch up on whatever the web leaves. Plain nice is not enough here:
// the kernel's EEVDF scheduler lets a running niced thread finish its slice before a woken web request
// runs (measured: web still waited in the run queue half the time with store and worker at nice 10, and
// accepted no more). SCHED_IDLE threads yield at once.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export const BACKGROUND_PRIORITIES = ['idle', 'low', 'normal'] as const;
export type BackgroundPriority = (typeof BACKGROUND_PRIORITIES)[number];

/** nice value for `low`, and the fallback for `idle` where SCHED_IDLE cannot be set. */
export const LOW_NICE = 19;

export interface Launch {
  command: string;
  args: string[];
  /** What the role runs under: SCHED_IDLE, a nice value, or normal. */
  how: string;
  /** Applied to the started child (by pid) when the launch itself could not carry the priority. */
  after?: (pid: number) => void;
}

const launchers = new Map<string, string | null>();

/**
 * A launcher that starts a program fine with `options` (util-linux chrt, coreutils nice), or null where
 * there is none. The probe starts this very node (an absolute path), so a minimal PATH cannot fail it.
 */
function launcher(name: 'chrt' | 'nice', options: string[]): string | null {
  if (launchers.has(name)) return launchers.get(name)!;
  let found: string | null = null;
  for (const candidate of [`/usr/bin/${name}`, `/bin/${name}`]) {
    try {
      execFileSync(candidate, [...options, process.execPath, '-e', ''], { stdio: 'ignore', timeout: 10_000 });
      found = candidate;
      break;
    } catch {
      // not there, or the kernel refuses: try the next
    }
  }
  launchers.set(name, found);
  return found;
}

/**
 * How to start a background role at `priority`. Threads inherit their creator's policy and nice value, so
 * the program is started under it (the launcher execs it: same pid, same IPC channel) rather than changed
 * later, which would miss threads created in between. Without a launcher, the nice value is set after.
 * `how` says which of these it is, for the supervisor's log.
 */
export function backgroundLaunch(command: string, args: string[], priority: BackgroundPriority): Launch {
  if (priority === 'normal') return { command, args, how: 'normal' };
  const chrt = priority === 'idle' ? launcher('chrt', ['--idle', '0']) : null;
  if (chrt) return { command: chrt, args: ['--idle', '0', command, ...args], how: 'SCHED_IDLE' };
  const nice = launcher('nice', ['-n', String(LOW_NICE)]);
  if (nice) return { command: nice, args: ['-n', String(LOW_NICE), command, ...args], how: `nice ${LOW_NICE}` };
  return { command, args, how: `nice ${LOW_NICE} (set after start)`, after: (pid) => renice(pid, LOW_NICE) };
}

function renice(pid: number, nice: number): void {
  try {
    os.setPriority(pid, nice);
  } catch {
    // the child may already be gone; its restart applies it again
  }
}
