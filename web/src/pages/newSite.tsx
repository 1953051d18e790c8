// Adding a site: the domain, a name and the time zone its days are counted in; then the snippet to copy and a
// live check that turns from "waiting" to "received" once the site's first event arrives. The new site's id
// goes into the URL (/sites/new?site=…), so a reload stays on the install step.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TrackingSnippetView } from '../../../lib/accounts/responses';
import type { RealtimeData } from '../../../lib/external/schemas';
import { get, post, qs } from '../lib/api';
import { Link, navigate } from '../lib/router';
import type { Website } from '../lib/types';
import { useData } from '../lib/useData';
import { Button, Field, FormError, splitFieldError, useSubmit } from '../ui/form';
import { Shell } from '../ui/layout';
import { ErrorNote, Loading } from '../ui/states';
import { browserTimeZone, TimezoneField } from '../ui/timezone';
import { metricValue, type V2Result } from './dashboard/query';
import './sites.css';

/** What people paste: `https://www.example.com/pricing` means the domain `www.example.com`. */
export function domainOf(input: string): string {
  return input
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/[/?#].*$/, '')
    .toLowerCase();
}

const FIELD_NAMES: Record<string, string> = { domain: 'Domain', name: 'Name', timezone: 'Time zone' };

function CreateForm() {
  const [domain, setDomain] = useState('');
  const [name, setName] = useState('');
  const [timezone, setTimezone] = useState(browserTimeZone);
  const submit = useSubmit(async () => {
    const d = domainOf(domain);
    const { website } = await post<{ website: Website }>('/api/websites', {
      domain: d,
      name: name.trim() || d,
      timezone,
    });
    navigate(`/sites/new?site=${website.id}`, { replace: true });
  });
  const problem = splitFieldError(submit.error);
  const errorFor = (field: string) => (problem.field === field ? `${FIELD_NAMES[field]} ${problem.text}` : undefined);
  const general = problem.field && FIELD_NAMES[problem.field] ? null : submit.error;
  return (
    <form
      class="step"
      onSubmit={(e) => {
        e.preventDefault();
        submit.run();
      }}
    >
      <Field
        label="Domain"
        name="domain"
        required
        maxLength={253}
        placeholder="example.com"
        autocomplete="off"
        spellcheck={false}
        value={domain}
        onInput={(e) => setDomain(e.currentTarget.value)}
        hint="The site’s address without https://, such as example.com or shop.example.com."
        error={errorFor('domain')}
      />
      <Field
        label="Name"
        name="name"
        maxLength={200}
        value={name}
        placeholder={domainOf(domain) || 'My site'}
        onInput={(e) => setName(e.currentTarget.value)}
        hint="How the site is listed here; the domain when left empty."
        error={errorFor('name')}
      />
      <TimezoneField
        value={timezone}
        onChange={setTimezone}
        hint="Days in the reports start at midnight in this zone."
        error={errorFor('timezone')}
      />
      <FormError>{general}</FormError>
      <Button type="submit" busy={submit.busy}>
        Add site
      </Button>
    </form>
  );
}

/** Copies the text; where the clipboard is not available, selects it for the reader to copy. */
function CopyButton({ target, disabled }: { target: { current: HTMLTextAreaElement | null }; disabled: boolean }) {
  const [note, setNote] = useState('');
  const copy = async () => {
    const el = target.current;
    if (!el) return;
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(el.value);
      setNote('Copied to the clipboard.');
    } catch {
      el.focus();
      el.select();
      setNote('Selected: press Ctrl+C (⌘C on a Mac) to copy.');
    }
  };
  return (
    <div class="row">
      <Button kind="secondary" onClick={copy} disabled={disabled}>
        Copy snippet
      </Button>
      <span class="muted" role="status">
        {note}
      </span>
    </div>
  );
}

/**
 * Waits for the site's first event: a pageview shows in the realtime presence as soon as it is accepted, any
 * stored event in Stats v2. Both answer 200 before and after, so waiting costs no error. Stops when unmounted.
 */
function useFirstEvent(siteId: string): { received: boolean; problem: string | null } {
  const [received, setReceived] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = async () => {
      const { signal } = controller;
      try {
        const [live, stored] = await Promise.all([
          get<RealtimeData>(`/api/external/v1/track/realtime/${siteId}`, { signal }),
          post<V2Result>('/api/v2/query', { site_id: siteId, metrics: ['events'], date_range: 'all' }, { signal }),
        ]);
        if (live.live_visitors > 0 || live.pageviews_last_30m > 0 || metricValue(stored.results[0]?.metrics[0]) > 0) {
          setReceived(true);
          return;
        }
        setProblem(null);
      } catch (err) {
        if (signal.aborted) return;
        setProblem((err as Error).message);
      }
      if (!signal.aborted) timer = setTimeout(check, 3000);
    };
    check();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [siteId]);
  return { received, problem };
}

function LiveCheck({ site }: { site: Website }) {
  const { received, problem } = useFirstEvent(site.id);
  return (
    <div class={received ? 'live-check live-check-done' : 'live-check'} role="status" aria-live="polite">
      {received ? (
        <>
          <span class="live-dot" aria-hidden="true" />
          <span>
            Received — <Link href={`/sites/${site.id}`}>open the dashboard</Link>
          </span>
        </>
      ) : (
        <>
          <span class="spinner" aria-hidden="true" />
          <span>
            Waiting for the first event… Open a page of {site.domain} with the snippet in a browser.
            {problem && <span class="field-error"> (The check failed: {problem} Retrying.)</span>}
          </span>
        </>
      )}
    </div>
  );
}

function Install({ siteId }: { siteId: string }) {
  const [allowLocalhost, setAllowLocalhost] = useState(false);
  const [persist, setPersist] = useState(false);
  const site = useData((signal) => get<{ website: Website }>(`/api/websites/${siteId}`, { signal }), [siteId]);
  const snippet = useData(
    (signal) =>
      get<TrackingSnippetView>(
        `/api/websites/${siteId}/snippet${qs({ allow_localhost: allowLocalhost || undefined, persist: persist || undefined })}`,
        { signal },
      ),
    [siteId, allowLocalhost, persist],
  );
  const text = useRef<HTMLTextAreaElement>(null);
  if (site.error) return <ErrorNote error={site.error} retry={site.reload} />;
  if (!site.data) return <Loading />;
  const w = site.data.website;
  return (
    <>
      <section class="step" aria-labelledby="install-title">
        <h2 id="install-title">Install the snippet</h2>
        <p class="lead">
          Put this tag in the <code>&lt;head&gt;</code> of every page of <strong>{w.domain}</strong>. It counts
          pageviews without cookies.
        </p>
        {snippet.error ? (
          <ErrorNote error={snippet.error} retry={snippet.reload} />
        ) : (
          <>
            <label class="visually-hidden" for="snippet">
              Tracking snippet
            </label>
            <textarea
              id="snippet"
              ref={text}
              class="snippet"
              readOnly
              rows={3}
              spellcheck={false}
              value={snippet.data?.script ?? 'Loading…'}
              onFocus={(e) => e.currentTarget.select()}
            />
            <CopyButton target={text} disabled={!snippet.data} />
          </>
        )}
        <div class="check">
          <input
            type="checkbox"
            id="opt-localhost"
            checked={allowLocalhost}
            aria-describedby="opt-localhost-hint"
            onChange={(e) => setAllowLocalhost(e.currentTarget.checked)}
          />
          <div>
            <label for="opt-localhost">Also count visits on localhost</label>
            <p class="field-hint" id="opt-localhost-hint">
              For trying the snippet on a development machine; leave it off on the live site.
            </p>
          </div>
        </div>
        <div class="check">
          <input
            type="checkbox"
            id="opt-persist"
            checked={persist}
            aria-describedby="opt-persist-hint"
            onChange={(e) => setPersist(e.currentTarget.checked)}
          />
          <div>
            <label for="opt-persist">Recognise returning visitors across visits</label>
            <p class="field-hint" id="opt-persist-hint">
              Keeps a random id in the visitor’s browser storage; where the law asks for consent to that, ask first.
            </p>
          </div>
        </div>
      </section>
      <section class="step" aria-labelledby="verify-title">
        <h2 id="verify-title">Check the installation</h2>
        <LiveCheck site={w} />
        <p class="row">
          <Link href={`/sites/${w.id}/settings`}>Site settings</Link>
          <Link href="/sites">All sites</Link>
        </p>
      </section>
    </>
  );
}

export default function NewSite({ query }: { query: URLSearchParams }) {
  const siteId = query.get('site');
  return (
    <Shell title="Add a site">
      <div class="steps">
        <h1>{siteId ? 'Install Tidemark' : 'Add a site'}</h1>
        {siteId ? <Install siteId={siteId} /> : <CreateForm />}
      </div>
    </Shell>
  );
}
