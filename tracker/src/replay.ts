// Session replay, loaded only for websites that enable it: rrweb records the page with every input masked,
// and chunks are sent every 5 s (and when the page is left) as `replay` events with a sequence number.
import { record } from '@rrweb/record';

type Send = (type: string, extra: Record<string, unknown>, beacon?: boolean) => void;

export function start(send: Send): void {
  let buffer: unknown[] = [];
  let seq = 0;
  const flush = (beacon?: boolean) => {
    if (buffer.length === 0) return;
    const data = JSON.stringify(buffer);
    buffer = [];
    send('replay', { seq: seq++, data }, beacon && data.length < 6e4);
  };
  record({
    emit: (event) => {
      buffer.push(event);
    },
    maskAllInputs: true,
    maskInputOptions: { password: true },
  });
  setInterval(flush, 5000);
  addEventListener('pagehide', () => flush(true));
}
