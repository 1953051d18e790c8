// Loads something now and again every `intervalMs` while the page is visible: a hidden tab asks nothing and
// catches up the moment it is shown again; unmounting stops the timer and aborts a request in flight.
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Polled<T> {
  data: T | undefined;
  error: Error | null;
  /** When the last successful answer arrived. */
  updatedAt: number | null;
}

export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, intervalMs: number, deps: unknown[]): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ data: undefined, error: null, updatedAt: null });
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let controller: AbortController | null = null;
    setState({ data: undefined, error: null, updatedAt: null });
    const visible = () => document.visibilityState === 'visible';
    const tick = async () => {
      timer = undefined;
      if (controller || !visible()) return;
      controller = new AbortController();
      try {
        const data = await loadRef.current(controller.signal);
        if (!stopped) setState({ data, error: null, updatedAt: Date.now() });
      } catch (err) {
        if (!stopped && (err as Error).name !== 'AbortError') setState((s) => ({ ...s, error: err as Error }));
      } finally {
        controller = null;
      }
      if (!stopped && visible()) timer = setTimeout(tick, intervalMs);
    };
    const onVisibility = () => {
      if (!visible()) {
        clearTimeout(timer);
        timer = undefined;
      } else if (!timer && !controller) tick();
    };
    document.addEventListener('visibilitychange', onVisibility);
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [...deps, intervalMs]);
  return state;
}
