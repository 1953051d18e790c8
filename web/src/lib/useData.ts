// Loads something for a view, with the three states every panel shows: loading, an error in words, the data.
// A newer load (changed inputs, reload) wins over an older one still in flight.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Data<T> {
  data: T | undefined;
  error: Error | null;
  loading: boolean;
  reload(): void;
}

export function useData<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Data<T> {
  const [state, setState] = useState<{ data: T | undefined; error: Error | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    loadRef.current(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: null, loading: false });
      },
      (error: Error) => {
        if (!controller.signal.aborted) setState((s) => ({ ...s, error, loading: false }));
      },
    );
    return () => controller.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
