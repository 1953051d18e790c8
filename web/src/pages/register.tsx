// Sign-up for a new person: their account and a personal team to add sites to. A server that does not allow
// sign-up says so and points at the two ways in (an invite link, or signing in); a fresh instance goes to set-up.
import { useEffect } from 'preact/hooks';
import { get, post } from '../lib/api';
import { useAuth } from '../lib/auth';
import { Link, navigate } from '../lib/router';
import type { Setup, SignIn } from '../lib/types';
import { useData } from '../lib/useData';
import { Button, Field, FormError, formValues, NewPasswordField, useSubmit } from '../ui/form';
import { Card } from '../ui/layout';
import { ErrorNote, Loading } from '../ui/states';

export default function Register() {
  const auth = useAuth();
  const setup = useData((signal) => get<Setup>('/api/auth/setup', { signal, anonymous: true }), []);
  const submit = useSubmit(async (values: Record<string, string>) => {
    const session = await post<SignIn>(
      '/api/auth/register',
      { email: values.email, password: values.password, full_name: values.full_name.trim() || undefined },
      { anonymous: true },
    );
    auth.signedIn(session);
    navigate('/sites/new', { replace: true });
  });
  useEffect(() => {
    if (setup.data && !setup.data.owner_exists) navigate('/setup', { replace: true });
  }, [setup.data]);
  useEffect(() => {
    // Someone already signed in has an account; a finished sign-up has navigated on already.
    if (auth.status === 'signedIn' && !submit.busy) navigate('/sites', { replace: true });
  }, [auth.status]);

  if (setup.error) return <ErrorNote error={setup.error} retry={setup.reload} />;
  if (!setup.data?.owner_exists) return <Loading />;
  if (!setup.data.signup_open) {
    return (
      <Card title="Sign-up is closed">
        <p>This Tidemark server does not let people create their own accounts.</p>
        <p>
          If you were invited to a team, open the invite link you were sent: you can create your account there.
          Otherwise ask the person who runs this server to invite you.
        </p>
        <p class="card-foot">
          Already have an account? <Link href="/login">Sign in</Link>
        </p>
      </Card>
    );
  }
  return (
    <Card title="Create your account">
      <p class="lead">You get a team of your own to add sites to; you can invite others to it later.</p>
      <form onSubmit={(e) => submit.run(formValues(e))}>
        <Field label="Your name" name="full_name" autocomplete="name" maxLength={200} />
        <Field label="Email" name="email" type="email" autocomplete="email" required maxLength={254} />
        <NewPasswordField />
        <FormError>{submit.error}</FormError>
        <Button type="submit" busy={submit.busy}>
          Create account
        </Button>
      </form>
      <p class="card-foot">
        Already have an account? <Link href="/login">Sign in</Link>
      </p>
    </Card>
  );
}
