// Pages load on first visit (esbuild splits each into its own chunk), keeping the first load small.
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../ui/states';

// biome-ignore lint/suspicious/noExplicitAny: a page takes its route's params, whatever they are named
type Page = FunctionComponent<any>;

export function lazy(load: () => Promise<{ default: Page }>): Page {
  let loaded: Page | null = null;
  return function LazyPage(props) {
    const [page, setPage] = useState<Page | null>(() => loaded);
    const [error, setError] = useState<Error | null>(null);
    useEffect(() => {
      if (loaded) return;
      load().then(
        (m) => {
          loaded = m.default;
          setPage(() => m.default);
        },
        () => setError(new Error('This page could not be loaded; the server may have been updated. Reload the page.')),
      );
    }, []);
    if (error) return <ErrorNote error={error} retry={() => window.location.reload()} />;
    const Component = page;
    return Component ? <Component {...props} /> : <Loading />;
  };
}
