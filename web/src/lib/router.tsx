// Path-based routing under BASE: links change history without a reload, and the location (path and query
// string) is the state a view can be bookmarked and shared by.
import type { ComponentChildren, PartialAnchorHTMLAttributes } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BASE } from './api';

export interface Location {
  /** The path without BASE, starting with '/'. */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const full = window.location.pathname;
  const path = full.startsWith(BASE) ? full.slice(BASE.length) || '/' : full;
  return { path, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** Goes to an app path ('/sites?x=1'); replace keeps the history entry (filters, range changes). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  if (!options.replace) window.scrollTo(0, 0);
  for (const l of listeners) l();
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return loc;
}

/** Matches '/sites/:id/settings' against a path; the named parts, or null. '*' at the end matches the rest. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '*') {
      params['*'] = s.slice(i).join('/');
      return params;
    }
    if (i >= s.length) return null;
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return p.length === s.length ? params : null;
}

type LinkProps = Omit<PartialAnchorHTMLAttributes<HTMLAnchorElement>, 'href' | 'role'> & {
  href: string;
  replace?: boolean;
  children?: ComponentChildren;
};

export function Link({ href, replace, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href, { replace });
  };
  return (
    <a href={`${BASE}${href}`} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
