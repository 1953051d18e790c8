// The frame around every signed-in page: a header with the way home, the account and signing out.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useAuth } from '../lib/auth';
import { Link, navigate } from '../lib/router';

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Tidemark` : 'Tidemark';
  }, [title]);
}

export function Shell({ title, children, wide }: { title: string; children: ComponentChildren; wide?: boolean }) {
  const auth = useAuth();
  useTitle(title);
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href="/sites" class="brand">
          <span class="brand-mark" aria-hidden="true" />
          Tidemark
        </Link>
        <nav aria-label="Main" class="topnav">
          <Link href="/sites">Sites</Link>
          <Link href="/account">Account</Link>
          {auth.user && (
            <button
              type="button"
              class="linklike"
              onClick={async () => {
                await auth.signOut();
                navigate('/login');
              }}
            >
              Sign out
            </button>
          )}
        </nav>
      </header>
      <main id="main" class={wide ? 'page page-wide' : 'page'}>
        {children}
      </main>
    </>
  );
}

/** A centred card for the pages before sign-in. */
export function Card({ title, children }: { title: string; children: ComponentChildren }) {
  useTitle(title);
  return (
    <main id="main" class="card-page">
      <div class="card">
        <p class="brand brand-center">
          <span class="brand-mark" aria-hidden="true" />
          Tidemark
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
