// The team that owns this site: its members and their roles (changed or removed here), and invites — a
// one-time link per email and role, shown once to copy and send, listed while pending, revocable.
import { useState } from 'preact/hooks';
import { del, get, post, put } from '../../lib/api';
import { useAuth } from '../../lib/auth';
import { dateTime } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Button, Field, FormError, useSubmit } from '../../ui/form';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import { ConfirmDelete, CopyField, explain, ROLE_LABELS, usePermissions } from './shared';
import type { SettingsTabProps } from './tab';
import type { CreatedInviteView, InviteView, MemberView, Role } from './types';

const ROLES: Role[] = ['viewer', 'editor', 'admin', 'owner'];

export default function Members({ site }: SettingsTabProps) {
  const perms = usePermissions(site.team_id);
  const members = useData(
    (signal) => get<MemberView[]>(`/api/websites/${site.id}/team-members`, { signal }),
    [site.id],
  );
  const invites = useData(
    (signal) => get<{ invites: InviteView[] }>(`/api/teams/${site.team_id}/invites`, { signal }),
    [site.team_id],
  );
  // Only an owner grants or takes the owner role (the server says so too).
  const myRole = perms.data?.role ?? 'viewer';
  const grantable = ROLES.filter((r) => r !== 'owner' || myRole === 'owner');
  const active = (members.data ?? []).filter((m) => !m.deactivated_at);
  const pending = (invites.data?.invites ?? []).filter((i) => i.status === 'pending');
  const limit = perms.data?.plan_limits.maxTeamMembers;

  return (
    <div class="manage">
      <section class="manage-section" aria-labelledby="member-list-title">
        <h2 id="member-list-title">Team members</h2>
        <p class="lead">
          Everyone here can see {site.name} and the team’s other sites; their role decides what they may change.
          {perms.data && limit != null && (
            <>
              {' '}
              The {perms.data.plan} plan allows {limit} member{limit === 1 ? '' : 's'}; the team has{' '}
              {perms.data.current_usage.team_members}.
            </>
          )}
        </p>
        {members.error ? (
          <ErrorNote error={members.error} retry={members.reload} />
        ) : !members.data || !perms.data ? (
          <Loading label="Loading members…" />
        ) : (
          <table class="manage-table">
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {active.map((m) => (
                <MemberRow
                  key={m.id}
                  member={m}
                  myRole={myRole}
                  grantable={grantable}
                  path={`/api/websites/${site.id}/team-members/${m.id}`}
                  changed={() => {
                    members.reload();
                    perms.reload();
                  }}
                />
              ))}
            </tbody>
          </table>
        )}
      </section>

      <Invite teamId={site.team_id} grantable={grantable} created={invites.reload} />

      <section class="manage-section" aria-labelledby="invite-list-title">
        <h2 id="invite-list-title">Pending invites</h2>
        {invites.error ? (
          <ErrorNote error={invites.error} retry={invites.reload} />
        ) : !invites.data ? (
          <Loading label="Loading invites…" />
        ) : pending.length === 0 ? (
          <Empty title="No pending invites">Invites that were accepted, revoked or expired are not listed.</Empty>
        ) : (
          <table class="manage-table">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {pending.map((i) => (
                <tr key={i.id}>
                  <td>{i.email}</td>
                  <td>
                    <span class="badge">{i.role}</span>
                  </td>
                  <td>{dateTime(i.expires_at)}</td>
                  <td class="actions">
                    <ConfirmDelete
                      label={`Revoke the invite for ${i.email}`}
                      confirmLabel="Revoke"
                      question={`Revoke the invite for ${i.email}? Its link stops working.`}
                      onConfirm={async () => {
                        await del(`/api/teams/${site.team_id}/invites/${i.id}`);
                        invites.reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}

function MemberRow({
  member,
  myRole,
  grantable,
  path,
  changed,
}: {
  member: MemberView;
  myRole: Role;
  grantable: Role[];
  path: string;
  changed(): void;
}) {
  const auth = useAuth();
  const isMe = member.user_id === auth.user?.id;
  const name = member.user.full_name ?? member.user.email;
  // An admin cannot touch an owner; the server refuses it too.
  const locked = member.role === 'owner' && myRole !== 'owner';
  const {
    busy,
    error,
    run: setRole,
  } = useSubmit(async (role: Role) => {
    await put(path, { role });
    changed();
  }, explain);
  return (
    <tr>
      <td>
        <strong>{name}</strong>
        {isMe && (
          <>
            {' '}
            <span class="badge badge-accent">you</span>
          </>
        )}
        {member.user.full_name && <div class="muted">{member.user.email}</div>}
        <div class="muted">Member since {dateTime(member.created_at)}</div>
      </td>
      <td>
        {locked ? (
          <span class="badge">owner</span>
        ) : (
          <select
            aria-label={`Role of ${name}`}
            value={member.role}
            disabled={busy}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
          >
            {grantable.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        )}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </td>
      <td class="actions">
        {!locked && !isMe && (
          <ConfirmDelete
            label={`Remove ${name} from the team`}
            confirmLabel="Remove"
            question={`Remove ${name}? They lose access to the team’s sites.`}
            onConfirm={async () => {
              await del(path);
              changed();
            }}
          />
        )}
      </td>
    </tr>
  );
}

function Invite({ teamId, grantable, created }: { teamId: string; grantable: Role[]; created(): void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [invite, setInvite] = useState<CreatedInviteView | null>(null);
  const { busy, error, run } = useSubmit(async () => {
    setInvite(await post<CreatedInviteView>(`/api/teams/${teamId}/invites`, { email: email.trim(), role }));
    setEmail('');
    created();
  }, explain);
  const submit = (e: Event) => {
    e.preventDefault();
    void run();
  };
  return (
    <section class="manage-section" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <p class="lead">
        Creates a link for one email address, valid for 7 days. Send it yourself: the link is shown only now. The person
        signs in, or creates an account, to join.
      </p>
      {invite && (
        <div class="secret" role="status">
          <p>
            Invite for <strong>{invite.email}</strong> as {invite.role}. Copy the link now and send it to them; it will
            not be shown again.
          </p>
          <CopyField id="invite-link" label="Invite link" value={invite.url} />
        </div>
      )}
      <form class="manage-form" onSubmit={submit}>
        <Field
          label="Email"
          type="email"
          required
          maxLength={254}
          autocomplete="off"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <div class="field">
          <label for="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {grantable.map((r) => (
              <option key={r} value={r}>
                {ROLE_LABELS[r]}
              </option>
            ))}
          </select>
        </div>
        <div class="form-actions">
          <Button type="submit" busy={busy}>
            Create invite link
          </Button>
        </div>
        <div class="form-actions">
          <FormError>{error}</FormError>
        </div>
      </form>
    </section>
  );
}
