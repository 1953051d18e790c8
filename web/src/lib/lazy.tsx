// Pages load on first visit (esbuild splits each into its own chunk), keeping the first load small. A route
// can start loading its page before it renders it (preload), while sign-in is still being checked.
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../ui/states';

// biome-ignore lint/suspicious/noExplicitAny: a page takes its route's params, whatever they are named
type Page = FunctionComponent<any>;
type PageProps = Record<string, unknown>;
/** A page's chunk; `prefetch` asks for the page's first data before the page can render (sign-in pending). */
interface PageModule {
  default: Page;
  prefetch?(props: PageProps): void;
}
export type LazyPage = Page & { preload(): void; prefetch(props: PageProps): void };

export function lazy(load: () => Promise<PageModule>): LazyPage {
  let loaded: Page | null = null;
  let loading: Promise<PageModule> | null = null;
  const start = () => {
    loading ??= load().then((m) => {
      loaded = m.default;
      return m;
    });
    return loading;
  };
  const LazyPage = (props: Record<string, unknown>) => {
    const [page, setPage] = useState<Page | null>(() => loaded);
    const [error, setError] = useState<Error | null>(null);
    useEffect(() => {
      // Also when a preload finished between the first render and now: the state still holds null.
      start().then(
        (m) => setPage(() => m.default),
        () => {
          loading = null;
          setError(new Error('This page could not be loaded; the server may have been updated. Reload the page.'));
        },
      );
    }, []);
    if (error) return <ErrorNote error={error} retry={() => window.location.reload()} />;
    const Component = page;
    return Component ? <Component {...props} /> : <Loading />;
  };
  LazyPage.preload = () => {
    start().catch(() => {});
  };
  LazyPage.prefetch = (props: PageProps) => {
    start().then(
      (m) => m.prefetch?.(props),
      () => {},
    );
  };
  return LazyPage;
}
