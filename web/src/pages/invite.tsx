// An invite link: who invited the reader to which team and role, then the one step that fits them — join
// (signed in as the invited email), switch accounts (signed in as someone else), sign in first (the email
// has an account), or create the invited account right here with a password.
import { useState } from 'preact/hooks';
import { ApiError, get, post } from '../lib/api';
import { useAuth } from '../lib/auth';
import { Link } from '../lib/router';
import type { InvitePreview, InviteRegistered } from '../lib/types';
import { useData } from '../lib/useData';
import { Button, Field, FormError, formValues, NewPasswordField, useSubmit } from '../ui/form';
import { Card } from '../ui/layout';
import { ErrorNote, Loading } from '../ui/states';

type Role = InvitePreview['role'];

/** What each role may do, in the reader's words. */
const ROLE_MEANING: Record<Role, string> = {
  viewer: 'see the team’s sites and their dashboards',
  editor: 'see the team’s sites and change their settings, goals and funnels',
  admin: 'manage the team’s sites, members and invites',
  owner: 'do everything, including managing the team’s plan and owners',
};

function Joined({ team, role }: { team: string; role: Role }) {
  return (
    <Card title="You have joined the team">
      <p>
        You are now {role === 'viewer' ? 'a' : 'an'} <strong>{role}</strong> of{' '}
        <strong class="invite-team">{team}</strong>: you can {ROLE_MEANING[role]}.
      </p>
      <p>
        <Link href="/sites" class="button button-primary button-link">
          Go to your sites
        </Link>
      </p>
    </Card>
  );
}

/** `email`: false where a form shows the invited email already. */
function Summary({ invite, email = true }: { invite: InvitePreview; email?: boolean }) {
  return (
    <dl class="facts">
      <dt>Team</dt>
      <dd class="invite-team">{invite.team.name}</dd>
      <dt>Role</dt>
      <dd>
        {invite.role} — can {ROLE_MEANING[invite.role]}
      </dd>
      {email && (
        <>
          <dt>For</dt>
          <dd class="break">{invite.email}</dd>
        </>
      )}
    </dl>
  );
}

export default function Invite({ token }: { token: string }) {
  const auth = useAuth();
  const path = `/api/invites/${encodeURIComponent(token)}`;
  const preview = useData((signal) => get<InvitePreview>(path, { signal, anonymous: true }), [path]);
  const [joined, setJoined] = useState<{ team: string; role: Role } | null>(null);

  // Signed in as the invited person: the JWT is the acceptance, no body.
  const accept = useSubmit(async () => {
    const done = await post<{ team_id: string; member: { role: Role } }>(`${path}/accept`);
    setJoined({ team: preview.data!.team.name, role: done.member.role });
  });
  // A new person: the account is created with the invite's email and signed in.
  const register = useSubmit(async (values: Record<string, string>) => {
    const session = await post<InviteRegistered>(
      `${path}/accept`,
      { password: values.password, full_name: values.full_name.trim() || undefined },
      { anonymous: true },
    );
    setJoined({ team: preview.data!.team.name, role: session.member.role });
    auth.signedIn(session);
  });

  if (joined) return <Joined {...joined} />;
  if (preview.error) {
    const gone = preview.error instanceof ApiError && (preview.error.status === 404 || preview.error.status === 400);
    if (!gone) return <ErrorNote error={preview.error} retry={preview.reload} />;
    return (
      <Card title="This invite cannot be used">
        <p>The link is unknown, was already used, or was revoked or has expired (invites last a week).</p>
        <p>Ask the person who invited you to send a new invite.</p>
        <p class="card-foot">
          <Link href="/login">Sign in</Link>
        </p>
      </Card>
    );
  }
  if (!preview.data || auth.status === 'loading') return <Loading />;
  const invite = preview.data;
  const next = `/login?next=${encodeURIComponent(`/invite/${token}`)}`;

  if (auth.status === 'signedIn' && auth.user) {
    const same = auth.user.email.toLowerCase() === invite.email.toLowerCase();
    return (
      <Card title={`Join ${invite.team.name}`}>
        <p class="lead">You have been invited to a team on Tidemark.</p>
        <Summary invite={invite} />
        {same ? (
          <>
            <FormError>{accept.error}</FormError>
            <Button onClick={() => accept.run()} busy={accept.busy}>
              Join the team
            </Button>
          </>
        ) : (
          <>
            <p>
              You are signed in as <strong class="break">{auth.user.email}</strong>, but this invite is for{' '}
              <strong class="break">{invite.email}</strong>. Sign out, then sign in or create the account with that
              email.
            </p>
            <Button kind="secondary" onClick={() => auth.signOut()}>
              Sign out and continue
            </Button>
          </>
        )}
      </Card>
    );
  }

  if (invite.registered) {
    return (
      <Card title={`Join ${invite.team.name}`}>
        <p class="lead">You have been invited to a team on Tidemark.</p>
        <Summary invite={invite} />
        <p>
          There is already an account for <strong class="break">{invite.email}</strong>. Sign in with it to accept the
          invite.
        </p>
        <Link href={next} class="button button-primary button-link">
          Sign in to accept
        </Link>
      </Card>
    );
  }

  return (
    <Card title={`Join ${invite.team.name}`}>
      <p class="lead">You have been invited to a team on Tidemark. Create your account to join it.</p>
      <Summary invite={invite} email={false} />
      <form onSubmit={(e) => register.run(formValues(e))}>
        <Field
          label="Email"
          name="email"
          type="email"
          value={invite.email}
          readOnly
          hint="The invite is for this email."
        />
        <Field label="Your name" name="full_name" autocomplete="name" maxLength={200} />
        <NewPasswordField />
        <FormError>{register.error}</FormError>
        <Button type="submit" busy={register.busy}>
          Create account and join
        </Button>
      </form>
      <p class="card-foot">An invite is for one email: to join with another account, ask for an invite to its email.</p>
    </Card>
  );
}
