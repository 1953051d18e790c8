// Who is signed in. On load the session cookie is swapped for a JWT (the dashboard stays signed in across
// reloads without keeping a token in storage); signing out ends the session on the server.
import { type ComponentChildren, createContext } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { get, post, renewToken, setToken, whenSignedOut } from './api';
import type { SignIn, User } from './types';

type Status = 'loading' | 'signedIn' | 'signedOut';

interface Auth {
  status: Status;
  user: User | null;
  /** After login, registration or accepting an invite. */
  signedIn(session: SignIn): void;
  signOut(): Promise<void>;
  /** Re-reads the user (after a profile change). */
  refresh(): Promise<void>;
}

const AuthContext = createContext<Auth | null>(null);

/**
 * Asked as the app's code starts, not after its first render: every signed-in page waits for it. True once
 * the session cookie has been swapped for a token.
 */
export const sessionChecked = renewToken();

export function AuthProvider({ children }: { children: ComponentChildren }) {
  const [status, setStatus] = useState<Status>('loading');
  const [user, setUser] = useState<User | null>(null);

  const refresh = useCallback(async () => {
    setUser(await get<User>('/api/users/me'));
  }, []);

  useEffect(() => {
    whenSignedOut(() => {
      setUser(null);
      setStatus('signedOut');
    });
    (async () => {
      if (!(await sessionChecked)) return setStatus('signedOut');
      // A fresh JWT is enough to show the page; the user's profile (for the header) arrives beside it.
      setStatus('signedIn');
      refresh().catch(() => {});
    })();
  }, [refresh]);

  const value = useMemo<Auth>(
    () => ({
      status,
      user,
      refresh,
      signedIn(session) {
        setToken(session.token);
        setUser(session.user);
        setStatus('signedIn');
      },
      async signOut() {
        try {
          await post('/api/auth/logout');
        } finally {
          setToken(null);
          setUser(null);
          setStatus('signedOut');
        }
      },
    }),
    [status, user, refresh],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}
