// Summarises V8 .cpuprofile files (written by `node --cpu-prof` or bench/cpu-profile-preload.ts): self time per function and per code
// area (a package under node_modules, a project file under dist/, node internals, native/GC).
//
//   node dist/bench/cpuprofile-summary.js [--top 20] file.cpuprofile …
import fs from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  functions: { name: string; where: string; selfMs: number; pct: number }[];
  areas: { area: string; selfMs: number; pct: number }[];
}

/** Where a frame's code lives, coarsely: "pkg:<name>", "dist/<file>", "node:<module>", or a V8 pseudo-frame. */
export function areaOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) {
    const n = frame.functionName;
    if (n === '(idle)' || n === '(program)' || n === '(garbage collector)' || n === '(root)') return n;
    return '(native)';
  }
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return `pkg:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(file: string, top = 20): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  if (samples.length > 0 && deltas.length === samples.length) {
    // timeDeltas[i] is the time since the previous sample; charge the interval ending at sample i+1 to i.
    for (let i = 0; i < samples.length; i++) {
      const dt = i + 1 < deltas.length ? deltas[i + 1] : 0;
      selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, dt));
    }
  } else {
    const per =
      (profile.endTime - profile.startTime) /
      Math.max(
        1,
        profile.nodes.reduce((a, n) => a + (n.hitCount ?? 0), 0),
      );
    for (const n of profile.nodes) selfUs.set(n.id, (n.hitCount ?? 0) * per);
  }
  let total = 0;
  let idle = 0;
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    total += us;
    const f = node.callFrame;
    if (f.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const area = areaOf(f);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = f.url ? `${areaOf(f)}:${f.lineNumber + 1}` : area;
    const key = `${f.functionName}|${where}`;
    const entry = fn.get(key) ?? { name: f.functionName || '(anonymous)', where, us: 0 };
    entry.us += us;
    fn.set(key, entry);
  }
  const busy = Math.max(1, total - idle);
  return {
    file,
    totalMs: Math.round(total / 1000),
    idleMs: Math.round(idle / 1000),
    functions: [...fn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({
        name: e.name,
        where: e.where,
        selfMs: Math.round(e.us / 1000),
        pct: Math.round((e.us / busy) * 1000) / 10,
      })),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => ({ area, selfMs: Math.round(us / 1000), pct: Math.round((us / busy) * 1000) / 10 })),
  };
}

export function formatSummary(s: ProfileSummary, label = path.basename(s.file)): string {
  const lines = [
    `== ${label}: ${s.totalMs} ms profiled, ${s.idleMs} ms idle, ${s.totalMs - s.idleMs} ms busy (percentages of busy)`,
  ];
  lines.push('  top self time by function:');
  for (const f of s.functions)
    lines.push(`    ${String(f.pct).padStart(5)}%  ${String(f.selfMs).padStart(7)} ms  ${f.name}  (${f.where})`);
  lines.push('  self time by area:');
  for (const a of s.areas)
    lines.push(`    ${String(a.pct).padStart(5)}%  ${String(a.selfMs).padStart(7)} ms  ${a.area}`);
  return lines.join('\n');
}

if (require.main === module) {
  const args = process.argv.slice(2);
  let top = 20;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--top') top = Number(args[++i]);
    else files.push(args[i]);
  }
  if (files.length === 0) {
    process.stderr.write('usage: cpuprofile-summary [--top N] file.cpuprofile …\n');
    process.exit(2);
  }
  for (const f of files) process.stdout.write(`${formatSummary(summarizeProfile(f, top))}\n\n`);
}
