// Plays one recording: fetches its rrweb events with the dashboard's credentials, then hands them to the
// player document (/replay-player, see replayFrame.ts) framed here, which loads rrweb-player on its own.
import { useEffect, useRef, useState } from 'preact/hooks';
import { BASE, get } from '../../../lib/api';
import { useData } from '../../../lib/useData';
import { ErrorNote, Loading } from '../../../ui/states';
import type { FrameMessage, PlayMessage } from './replayFrame';
import { external, type ReplayEventsData } from './types';

export function ReplayPlayer({ siteId, sessionId }: { siteId: string; sessionId: string }) {
  const events = useData(
    (signal) =>
      get<ReplayEventsData>(external(`/replays/${siteId}/sessions/${encodeURIComponent(sessionId)}/events`), {
        signal,
      }),
    [siteId, sessionId],
  );
  const frame = useRef<HTMLIFrameElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [started, setStarted] = useState(false);
  useEffect(() => {
    if (!events.data) return;
    const data = events.data;
    setFailed(null);
    setStarted(false);
    const onMessage = (e: MessageEvent) => {
      const win = frame.current?.contentWindow;
      if (e.origin !== window.location.origin || !win || e.source !== win) return;
      const m = e.data as FrameMessage;
      if (m.type === 'ready') {
        win.postMessage({ type: 'play', events: data.events } satisfies PlayMessage, window.location.origin);
      } else if (m.type === 'size' && frame.current) {
        frame.current.style.height = `${Math.round(m.height)}px`;
        setStarted(true);
      } else if (m.type === 'failed') setFailed(m.message);
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, [events.data]);

  if (events.error) return <ErrorNote error={events.error} retry={events.reload} />;
  if (!events.data) return <Loading label="Loading the recording…" />;
  return (
    <>
      {!started && !failed && <Loading label="Starting the player…" />}
      {failed && <ErrorNote error={failed} />}
      {events.data.truncated && (
        <p class="muted small">This recording is long; the player shows its first part only.</p>
      )}
      <iframe
        ref={frame}
        class="rp-frame"
        title="Session replay player"
        src={`${BASE}/replay-player`}
        data-testid="replay-frame"
      />
    </>
  );
}
