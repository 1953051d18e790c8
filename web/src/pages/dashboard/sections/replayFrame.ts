// The replay player's own document (served at /replay-player by api/routes/dashboard.ts, framed by the
// replays section). rrweb rebuilds the recorded page with the page's own <style> elements and style
// attributes, which the dashboard's CSP (style-src 'self') blocks; this document alone allows inline styles,
// so the dashboard itself keeps the strict policy. It takes its events from the framing page (same origin
// only) by postMessage and loads rrweb-player, in its own chunk, once it has them.
import 'rrweb-player/dist/style.css';
import './replayFrame.css';

export interface PlayMessage {
  type: 'play';
  events: unknown[];
}
export type FrameMessage = { type: 'ready' } | { type: 'size'; height: number } | { type: 'failed'; message: string };

const CONTROLLER_HEIGHT = 80;
const tell = (m: FrameMessage) => window.parent.postMessage(m, window.location.origin);

/** The recorded viewport's size, from rrweb's Meta event (type 4), for the player's aspect ratio. */
function recordedSize(events: unknown[]): { width: number; height: number } {
  for (const e of events as { type?: number; data?: { width?: number; height?: number } }[]) {
    if (e?.type === 4 && e.data?.width && e.data?.height) return { width: e.data.width, height: e.data.height };
  }
  return { width: 16, height: 10 };
}

async function play(events: unknown[]) {
  const target = document.getElementById('player');
  if (!target) return;
  if (events.length < 2) {
    tell({ type: 'failed', message: 'This recording has too few events to play.' });
    return;
  }
  try {
    const { default: Player } = await import('rrweb-player');
    const width = document.documentElement.clientWidth;
    const size = recordedSize(events);
    const height = Math.round(Math.min(width * (size.height / size.width), window.screen.height * 0.6));
    target.replaceChildren();
    new Player({
      target,
      // biome-ignore lint/suspicious/noExplicitAny: rrweb's event type is checked by the Replayer, not here
      props: { events: events as any, width, height, autoPlay: true, showController: true, skipInactive: true },
    });
    tell({ type: 'size', height: height + CONTROLLER_HEIGHT });
  } catch (err) {
    tell({ type: 'failed', message: `The player could not start: ${(err as Error).message}` });
  }
}

window.addEventListener('message', (e: MessageEvent) => {
  if (e.origin !== window.location.origin || e.source !== window.parent) return;
  const m = e.data as PlayMessage | null;
  if (m?.type === 'play' && Array.isArray(m.events)) play(m.events);
});
tell({ type: 'ready' });
