// Sign in; back to where the reader was going (`next`), or to their sites. A fresh instance goes to set-up.
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../lib/api';
import { useAuth } from '../lib/auth';
import { Link, navigate } from '../lib/router';
import type { Setup, SignIn } from '../lib/types';
import { Button, Field, FormError, formValues, useSubmit } from '../ui/form';
import { Card } from '../ui/layout';

/** Only paths inside the app: a `next` pointing elsewhere would make the login page an open redirect. */
export function safeNext(query: URLSearchParams): string {
  const next = query.get('next') ?? '';
  return /^\/(?![/\\])/.test(next) ? next : '/sites';
}

export default function Login({ query }: { query: URLSearchParams }) {
  const auth = useAuth();
  const [signupOpen, setSignupOpen] = useState(false);
  const submit = useSubmit(async (values: Record<string, string>) => {
    auth.signedIn(await post<SignIn>('/api/auth/login', { email: values.email, password: values.password }));
    navigate(safeNext(query), { replace: true });
  });
  useEffect(() => {
    if (auth.status === 'signedIn') navigate(safeNext(query), { replace: true });
  }, [auth.status, query]);
  useEffect(() => {
    get<Setup>('/api/auth/setup').then(
      (s) => {
        if (!s.owner_exists) navigate('/setup', { replace: true });
        setSignupOpen(s.signup_open);
      },
      () => {},
    );
  }, []);
  return (
    <Card title="Sign in">
      <form onSubmit={(e) => submit.run(formValues(e))}>
        <Field label="Email" name="email" type="email" autocomplete="username" required maxLength={254} />
        <Field label="Password" name="password" type="password" autocomplete="current-password" required />
        <FormError>{submit.error}</FormError>
        <Button type="submit" busy={submit.busy}>
          Sign in
        </Button>
      </form>
      {signupOpen && (
        <p class="card-foot">
          New here? <Link href="/register">Create an account</Link>
        </p>
      )}
    </Card>
  );
}
