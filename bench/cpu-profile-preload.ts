// Preloaded into the service's roles by `bench/ingest.ts --cpu-prof` (NODE_OPTIONS="--require …"; Node does
// not accept --cpu-prof itself in NODE_OPTIONS). Starts the V8 sampling profiler through the in-process
// inspector and writes a .cpuprofile into BENCH_CPU_PROF_DIR when the process exits.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  let written = false;
  process.on('exit', () => {
    if (written) return;
    written = true;
    // The in-process session answers synchronously, so this completes inside the exit handler.
    session.post('Profiler.stop', (err, result) => {
      if (err || !result) return;
      const script = path.basename(process.argv[1] ?? 'node', '.js');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `CPU.${script}.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
