// The bench service's processes in /proc: the supervisor's children by role, their peak RSS and CPU time, so
// every benchmark can print CPU per unit of work per role beside its wall-clock figures.
import fs from 'node:fs';

export const ROLES = ['store', 'web', 'worker', 'clock'] as const;
export type Role = (typeof ROLES)[number] | 'supervisor' | 'redis';

const CLK_TCK = 100; // Linux USER_HZ

function readProc(pid: number, file: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  if (!stat) return undefined;
  // The command name is in parentheses and may hold spaces; fields after it are space-separated.
  const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(after[1]);
}

function cpuTicks(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  if (!stat) return undefined;
  const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(after[11]) + Number(after[12]); // utime + stime
}

export function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  const m = readProc(pid, 'status')?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) : undefined;
}

/** The supervisor's children by role, found by scanning /proc for processes whose parent it is. */
export function serviceProcesses(supervisorPid: number): Map<Role, number> {
  const out = new Map<Role, number>([['supervisor', supervisorPid]]);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (parentOf(pid) !== supervisorPid) continue;
    const cmd = readProc(pid, 'cmdline')?.split('\0').join(' ') ?? '';
    if (cmd.includes('store-main.js')) out.set('store', pid);
    else if (cmd.includes('api/server.js')) out.set('web', pid);
    else if (cmd.includes('workers/main.js')) out.set('worker', pid);
    else if (cmd.includes('jobs/clock.js')) out.set('clock', pid);
  }
  // The shared Redis server (not ours, only read): its CPU is part of the ingestion path.
  for (const entry of fs.readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && readProc(Number(entry), 'comm')?.trim() === 'redis-server') {
      out.set('redis', Number(entry));
      break;
    }
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = line.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = line[3] + line[4];
  return { busy: total - idle, total };
}

export interface CpuSnapshot {
  at: number;
  ticks: Map<Role, number>;
  machine: { busy: number; total: number };
}

export function cpuSnapshot(procs: Map<Role, number>): CpuSnapshot {
  const ticks = new Map<Role, number>();
  for (const [role, pid] of procs) {
    const t = cpuTicks(pid);
    if (t !== undefined) ticks.set(role, t);
  }
  return { at: Date.now(), ticks, machine: machineTicks() };
}

/** CPU use per role between two snapshots, in percent of one core; "machine" is percent of all cores. */
export function cpuUse(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const secs = Math.max(0.001, (b.at - a.at) / 1000);
  const out: Record<string, number> = {};
  for (const [role, t] of b.ticks) {
    const t0 = a.ticks.get(role);
    if (t0 !== undefined) out[role] = Math.round(((t - t0) / CLK_TCK / secs) * 100);
  }
  const dm = b.machine.total - a.machine.total;
  out.machine = dm > 0 ? Math.round(((b.machine.busy - a.machine.busy) / dm) * 100) : NaN;
  return out;
}

/** CPU milliseconds each role spent between two snapshots. */
export function cpuMs(a: CpuSnapshot, b: CpuSnapshot): Partial<Record<Role, number>> {
  const out: Partial<Record<Role, number>> = {};
  for (const [role, t] of b.ticks) {
    const t0 = a.ticks.get(role);
    if (t0 !== undefined) out[role] = ((t - t0) * 1000) / CLK_TCK;
  }
  return out;
}

/** Seconds since a process started (from /proc: its start time in clock ticks after boot). */
export function ageSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / CLK_TCK;
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) - started;
}
