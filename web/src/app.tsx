// The route table. Pages before sign-in are open; the rest send a signed-out reader to sign in and back.
import { useEffect } from 'preact/hooks';
import { AuthProvider, useAuth } from './lib/auth';
import { type LazyPage, lazy } from './lib/lazy';
import { match, navigate, useLocation } from './lib/router';
import { Loading } from './ui/states';

const Setup = lazy(() => import('./pages/setup'));
const Login = lazy(() => import('./pages/login'));
const Register = lazy(() => import('./pages/register'));
const Invite = lazy(() => import('./pages/invite'));
const Account = lazy(() => import('./pages/account'));
const Sites = lazy(() => import('./pages/sites'));
const NewSite = lazy(() => import('./pages/newSite'));
const Settings = lazy(() => import('./pages/settings/index'));
const Dashboard = lazy(() => import('./pages/dashboard/index'));
const Share = lazy(() => import('./pages/share'));
const NotFound = lazy(() => import('./pages/notFound'));

interface Route {
  path: string;
  page: LazyPage;
  /** Open to readers who are not signed in. */
  open?: boolean;
}

const ROUTES: Route[] = [
  { path: '/setup', page: Setup, open: true },
  { path: '/login', page: Login, open: true },
  { path: '/register', page: Register, open: true },
  { path: '/invite/:token', page: Invite, open: true },
  { path: '/share/:websiteId/*', page: Share, open: true },
  { path: '/share/:websiteId', page: Share, open: true },
  { path: '/account', page: Account },
  { path: '/sites', page: Sites },
  { path: '/sites/new', page: NewSite },
  { path: '/sites/:websiteId/settings/*', page: Settings },
  { path: '/sites/:websiteId/settings', page: Settings },
  { path: '/sites/:websiteId/*', page: Dashboard },
  { path: '/sites/:websiteId', page: Dashboard },
];

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Router() {
  const auth = useAuth();
  const loc = useLocation();
  if (loc.path === '/') {
    if (auth.status === 'loading') return <Loading />;
    return <Redirect to={auth.status === 'signedIn' ? '/sites' : '/login'} />;
  }
  for (const route of ROUTES) {
    const params = match(route.path, loc.path);
    if (!params) continue;
    // The page's code downloads while sign-in is checked, not after.
    route.page.preload();
    if (!route.open) {
      if (auth.status === 'loading') {
        // Its first questions can go with the session cookie while the cookie is swapped for a token.
        route.page.prefetch({ ...params, query: loc.query });
        return <Loading />;
      }
      if (auth.status === 'signedOut') {
        const back = encodeURIComponent(loc.path + (loc.query.size ? `?${loc.query}` : ''));
        return <Redirect to={`/login?next=${back}`} />;
      }
    }
    const Page = route.page;
    return <Page {...params} query={loc.query} />;
  }
  return <NotFound />;
}

export function App() {
  return (
    <AuthProvider>
      <Router />
    </AuthProvider>
  );
}
