// First run: on an instance with no owner yet, the first account created here becomes the instance owner.
import { useEffect } from 'preact/hooks';
import { get, post } from '../lib/api';
import { useAuth } from '../lib/auth';
import { navigate } from '../lib/router';
import type { Setup as SetupState, SignIn } from '../lib/types';
import { useData } from '../lib/useData';
import { Button, Field, FormError, formValues, NewPasswordField, useSubmit } from '../ui/form';
import { Card } from '../ui/layout';
import { ErrorNote, Loading } from '../ui/states';

export default function Setup() {
  const auth = useAuth();
  const setup = useData((signal) => get<SetupState>('/api/auth/setup', { signal }), []);
  const submit = useSubmit(async (values: Record<string, string>) => {
    const session = await post<SignIn>('/api/auth/register', {
      email: values.email,
      password: values.password,
      full_name: values.full_name || undefined,
    });
    auth.signedIn(session);
    navigate('/sites/new');
  });
  useEffect(() => {
    if (setup.data?.owner_exists) navigate('/login', { replace: true });
  }, [setup.data]);

  if (setup.error) return <ErrorNote error={setup.error} retry={setup.reload} />;
  if (!setup.data || setup.data.owner_exists) return <Loading />;
  return (
    <Card title="Welcome to Tidemark">
      <p class="lead">
        Create the owner account of this instance. The owner’s team has no plan limits and can invite everyone else.
      </p>
      <form onSubmit={(e) => submit.run(formValues(e))}>
        <Field label="Your name" name="full_name" autocomplete="name" maxLength={200} />
        <Field label="Email" name="email" type="email" autocomplete="email" required maxLength={254} />
        <NewPasswordField />
        <FormError>{submit.error}</FormError>
        <Button type="submit" busy={submit.busy}>
          Create owner account
        </Button>
      </form>
    </Card>
  );
}
