// The signed-in person's account: profile (name, picture), password, and deleting the account. Changing the
// password ends every other session and revokes every earlier token, so the page takes the fresh token the
// server returns; deleting asks for the password again and explains, in words, why it cannot go ahead.
import { useState } from 'preact/hooks';
import { ApiError, BASE, del, put, setToken } from '../lib/api';
import { useAuth } from '../lib/auth';
import type { PasswordChanged, User } from '../lib/types';
import { Button, Field, FormError, formValues, NewPasswordField, useSubmit } from '../ui/form';
import { Card, Shell } from '../ui/layout';
import { Panel } from '../ui/panel';
import { Loading } from '../ui/states';

function Saved({ children }: { children?: string | null }) {
  return (
    <p class="form-ok" role="status">
      {children}
    </p>
  );
}

function Profile({ user }: { user: User }) {
  const auth = useAuth();
  const [saved, setSaved] = useState<string | null>(null);
  const submit = useSubmit(async (values: Record<string, string>) => {
    setSaved(null);
    await put<User>('/api/users/me', {
      full_name: values.full_name.trim() || null,
      avatar_url: values.avatar_url.trim() || null,
    });
    await auth.refresh();
    setSaved('Profile saved.');
  });
  return (
    <Panel title="Profile">
      <form onSubmit={(e) => submit.run(formValues(e))} class="account-form">
        <Field
          label="Email"
          name="email"
          type="email"
          value={user.email}
          readOnly
          hint="You sign in with this email. It cannot be changed here."
        />
        <Field
          label="Your name"
          name="full_name"
          autocomplete="name"
          maxLength={200}
          defaultValue={user.full_name ?? ''}
          hint="Shown to your team mates. Leave empty to show your email instead."
        />
        <Field
          label="Picture URL"
          name="avatar_url"
          type="url"
          maxLength={2048}
          placeholder="https://…"
          defaultValue={user.avatar_url ?? ''}
          hint="An http(s) link to an image; optional."
        />
        <FormError>{submit.error}</FormError>
        <div class="form-actions">
          <Button type="submit" busy={submit.busy}>
            Save profile
          </Button>
          <Saved>{saved}</Saved>
        </div>
      </form>
    </Panel>
  );
}

function Password() {
  const [saved, setSaved] = useState<string | null>(null);
  const submit = useSubmit(async (values: Record<string, string>, form: HTMLFormElement) => {
    setSaved(null);
    if (values.new_password !== values.confirm_password) {
      throw new Error('The new password and its confirmation differ; type the same password in both.');
    }
    const changed = await put<PasswordChanged>(
      '/api/users/me/password',
      { current_password: values.current_password, new_password: values.new_password },
      { passwordCheck: true },
    );
    // Every earlier token is revoked, this page's too: carry on with the fresh one.
    setToken(changed.token);
    form.reset();
    setSaved('Password changed. You were signed out everywhere else.');
  });
  return (
    <Panel title="Password">
      <form onSubmit={(e) => submit.run(formValues(e), e.currentTarget as HTMLFormElement)} class="account-form">
        <Field
          label="Current password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
        />
        <NewPasswordField
          label="New password"
          name="new_password"
          hint="At least 8 characters. Other browsers where you are signed in will be signed out."
        />
        <Field
          label="Confirm new password"
          name="confirm_password"
          type="password"
          autocomplete="new-password"
          required
          minLength={8}
          maxLength={512}
        />
        <FormError>{submit.error}</FormError>
        <div class="form-actions">
          <Button type="submit" busy={submit.busy}>
            Change password
          </Button>
          <Saved>{saved}</Saved>
        </div>
      </form>
    </Panel>
  );
}

/** Why the server refused, in words a person can act on. */
function deleteRefusal(err: unknown): Error {
  if (!(err instanceof ApiError)) return err as Error;
  if (err.code === 'INSTANCE_OWNER') {
    return new Error(
      'You own this Tidemark server, so your account cannot be deleted. Make another account the owner first (on the server: tidemark admin create-user --owner).',
    );
  }
  if (err.code === 'LAST_OWNER') {
    // The server names each team with its id; the name is what a person recognises.
    const reason = err.message.replace(/ \([0-9a-f-]{36}\)/g, '');
    return new Error(
      `Your account cannot be deleted yet: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}, then try again.`,
    );
  }
  if (err.status === 401) return new Error('That password is not correct; nothing was deleted.');
  return err;
}

function DeleteAccount({ onDeleted }: { onDeleted: () => void }) {
  const submit = useSubmit(async (values: Record<string, string>) => {
    try {
      await del('/api/users/me', { password: values.password }, { passwordCheck: true });
    } catch (err) {
      throw deleteRefusal(err);
    }
    setToken(null);
    onDeleted();
  });
  return (
    <Panel title="Delete account">
      <form onSubmit={(e) => submit.run(formValues(e))} class="account-form">
        <p class="account-note">
          This deletes your account and every team no one else uses — your own team with its sites, their analytics, API
          keys and invites. Teams you share with others stay. It cannot be undone.
        </p>
        <Field
          label="Password to confirm"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          hint="Type your password to delete the account."
        />
        <FormError>{submit.error}</FormError>
        <div class="form-actions">
          <Button type="submit" kind="danger" busy={submit.busy}>
            Delete my account
          </Button>
        </div>
      </form>
    </Panel>
  );
}

export default function Account() {
  const auth = useAuth();
  const [deleted, setDeleted] = useState(false);
  if (deleted) {
    // Not a Link: a full load starts the app over without the deleted user (the server cleared the session).
    return (
      <Card title="Your account was deleted">
        <p>Your account and the teams only you used are gone. Thank you for using Tidemark.</p>
        <p class="card-foot">
          <a href={`${BASE}/login`}>Back to sign in</a>
        </p>
      </Card>
    );
  }
  if (!auth.user) return <Loading />;
  return (
    <Shell title="Account">
      <h1>Account</h1>
      <p class="lead">
        Signed in as <strong class="break">{auth.user.full_name ?? auth.user.email}</strong>
        {auth.user.full_name && <span class="break"> ({auth.user.email})</span>}
      </p>
      <div class="account-sections">
        <Profile user={auth.user} />
        <Password />
        <DeleteAccount onDeleted={() => setDeleted(true)} />
      </div>
    </Shell>
  );
}
