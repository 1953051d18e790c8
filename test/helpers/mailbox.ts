// A real SMTP server in the test process (smtp-server) that keeps every message it receives, parsed by
// mailparser, and a loopback HTTP receiver standing in for a Slack incoming webhook.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Mailbox {
  url: string;
  messages: ParsedMail[];
  /** The messages to one address (case-insensitive). */
  to(address: string): ParsedMail[];
  /** Waits until at least `count` messages arrived in all (at most `ms`). */
  waitFor(count: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

const recipients = (m: ParsedMail) =>
  (Array.isArray(m.to) ? m.to : m.to ? [m.to] : []).flatMap((a) => a.value.map((v) => (v.address ?? '').toLowerCase()));

export async function startMailbox(): Promise<Mailbox> {
  const messages: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate to trust in the test.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push(parsed);
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) => messages.filter((m) => recipients(m).includes(address.toLowerCase())),
    async waitFor(count, ms = 5000) {
      const until = Date.now() + ms;
      while (messages.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} messages, got ${messages.length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface SlackReceiver {
  url: string;
  bodies: { text: string; blocks?: unknown[] }[];
  /** The status the next requests get (200 by default). */
  status: number;
  close(): Promise<void>;
}

export async function startSlackReceiver(): Promise<SlackReceiver> {
  const receiver: SlackReceiver = { url: '', bodies: [], status: 200, close: async () => {} };
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => {
      data += c;
    });
    req.on('end', () => {
      if (receiver.status === 200) receiver.bodies.push(JSON.parse(data));
      res.writeHead(receiver.status).end(receiver.status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T000/B000/secret`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}
