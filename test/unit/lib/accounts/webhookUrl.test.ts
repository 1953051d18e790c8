import { notificationsBody, revenueBody } from '../../../../lib/accounts/settingsSchemas';
import { isPrivateHost, webhookUrlProblem } from '../../../../lib/accounts/webhookUrl';
import { loadConfig } from '../../../../lib/config';

describe('webhook URLs', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://0x7f.1/hook', // WHATWG spells it 127.0.0.1
    'https://2130706433/hook',
    'https://10.1.2.3/hook',
    'https://172.20.0.1/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hook',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:10.0.0.1]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://localhost/hook',
    'https://api.localhost/hook',
    'https://printer.local/hook',
    'https://intranet/hook',
    'https://metadata.google.internal/hook',
  ])('refuses the private or local host of %s by default', (url) => {
    expect(webhookUrlProblem(url, false)).toMatch(/public host/);
  });

  it('accepts https on a public host, and refuses other schemes and credentials', () => {
    expect(webhookUrlProblem('https://hooks.slack.com/services/T0/B0/XYZ', false)).toBeUndefined();
    expect(webhookUrlProblem('https://8.8.8.8/hook', false)).toBeUndefined();
    expect(webhookUrlProblem('https://[2001:4860:4860::8888]/hook', false)).toBeUndefined();
    expect(webhookUrlProblem('http://hooks.slack.com/services/x', false)).toMatch(/https/);
    expect(webhookUrlProblem('ftp://hooks.slack.com/x', true)).toMatch(/http\(s\)/);
    expect(webhookUrlProblem('javascript:alert(1)', false)).toMatch(/https/);
    expect(webhookUrlProblem('https://user:pw@hooks.slack.com/x', false)).toMatch(/user name or password/);
    expect(webhookUrlProblem('hooks.slack.com/x', false)).toMatch(/absolute URL/);
  });

  it('admits http and private hosts when WEBHOOK_ALLOW_PRIVATE is on', () => {
    expect(webhookUrlProblem('http://127.0.0.1:9000/hook', true)).toBeUndefined();
    expect(webhookUrlProblem('https://10.0.0.5/hook', true)).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE: 'true' }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
  });

  it('tells hosts apart without resolving names', () => {
    expect(isPrivateHost('example.com')).toBe(false);
    expect(isPrivateHost('EXAMPLE.COM.')).toBe(false);
    expect(isPrivateHost('localhost.')).toBe(true);
    expect(isPrivateHost('172.32.0.1')).toBe(false); // just outside 172.16.0.0/12
  });

  it('never repeats the URL in a validation message', () => {
    const secret = 'https://10.0.0.1/services/T000/B000/SECRETTOKEN';
    const result = notificationsBody(false).safeParse({ slack_webhook_url: secret });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).not.toContain('SECRETTOKEN');
  });
});

describe('revenue currency', () => {
  it('takes ISO 4217 codes in any case and refuses others', () => {
    expect(revenueBody.parse({ revenue_currency: 'eur' }).revenue_currency).toBe('EUR');
    expect(revenueBody.parse({ revenue_currency: 'JPY' }).revenue_currency).toBe('JPY');
    for (const bad of ['XYZ', 'EURO', 'US', '', 978]) {
      expect(revenueBody.safeParse({ revenue_currency: bad }).success).toBe(false);
    }
  });
});
