// Questions in plain English on a site's overview (issue 27): a question box and the conversation it starts.
// Each question goes to POST /api/conversations/:id/ask, so follow-ups ("and last month?", "only mobile")
// lean on the earlier turns; answers show the summary and the result (a figure, a table, a list or points).
import { useState } from 'preact/hooks';
import type { ConversationView, MessageView } from '../../../../../lib/accounts/conversationSchemas';
import { post } from '../../../lib/api';
import { Panel } from '../../../ui/panel';
import { ErrorNote } from '../../../ui/states';
import type { SectionProps } from '../section';

type Result = NonNullable<MessageView['result']>;

function ResultView({ result }: { result: Result }) {
  const r = result.results;
  if (r.type === 'number')
    return (
      <p class="ask-figure">
        <strong>{r.value.toLocaleString()}</strong> <span>{r.label}</span>
      </p>
    );
  if (r.type === 'list')
    return (
      <ul class="ask-list">
        {r.items.map((item) => (
          <li key={item}>{item}</li>
        ))}
      </ul>
    );
  const [columns, rows] =
    r.type === 'table' ? [r.columns, r.rows] : [['date', 'value'], r.points.map((p) => [p.date, p.value])];
  return (
    <table class="ask-table">
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c} scope="col">
              {c.replace('_', ' ')}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={String(row[0])}>
            {row.map((cell, i) => (
              <td key={columns[i]}>{typeof cell === 'number' ? cell.toLocaleString() : cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default function AskPanel({ site }: SectionProps) {
  const [question, setQuestion] = useState('');
  const [conversation, setConversation] = useState<ConversationView | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  async function ask(text: string) {
    const q = text.trim();
    if (!q || busy) return;
    setBusy(true);
    setError(null);
    try {
      const current =
        conversation ??
        (await post<ConversationView>('/api/conversations', { title: q.slice(0, 80), team_id: site.team_id }));
      setConversation(current);
      setConversation(
        await post<ConversationView>(`/api/conversations/${current.id}/ask`, { question: q, website_id: site.id }),
      );
      setQuestion('');
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  }

  const messages = conversation?.messages ?? [];
  const lastAnswer = [...messages].reverse().find((m) => m.role === 'assistant')?.result;
  return (
    <Panel
      title="Ask a question"
      actions={
        conversation && (
          <button type="button" class="button button-small button-secondary" onClick={() => setConversation(null)}>
            New conversation
          </button>
        )
      }
    >
      <div class="ask">
        <form
          class="ask-form"
          onSubmit={(e) => {
            e.preventDefault();
            void ask(question);
          }}
        >
          <label class="visually-hidden" for="ask-question">
            Question about this site
          </label>
          <input
            id="ask-question"
            name="question"
            type="text"
            maxLength={500}
            placeholder="e.g. Top pages in the last 7 days"
            value={question}
            onInput={(e) => setQuestion((e.target as HTMLInputElement).value)}
            disabled={busy}
          />
          <button type="submit" class="button button-primary" disabled={busy || !question.trim()}>
            {busy ? 'Asking…' : 'Ask'}
          </button>
        </form>
        {error && <ErrorNote error={error} />}
        {messages.length > 0 && (
          <ol class="ask-conversation" aria-label="Conversation" aria-live="polite">
            {messages.map((m) => (
              <li
                key={`${m.timestamp}-${m.role}`}
                class={m.role === 'user' ? 'ask-turn ask-user' : 'ask-turn ask-answer'}
              >
                <p class="ask-text">{m.content}</p>
                {m.result && <ResultView result={m.result} />}
              </li>
            ))}
          </ol>
        )}
        {lastAnswer && lastAnswer.suggestions.length > 0 && (
          <section class="ask-suggestions" aria-label="Suggested questions">
            {lastAnswer.suggestions.map((s) => (
              <button key={s} type="button" class="button button-small button-secondary" onClick={() => void ask(s)}>
                {s}
              </button>
            ))}
          </section>
        )}
      </div>
    </Panel>
  );
}
