// The CLI's HTTP commands read only these settings (lib/config.ts loadClientConfig).
import path from 'node:path';
import { ConfigError, loadClientConfig } from '../../../lib/config';

describe('loadClientConfig', () => {
  it('keeps the session under TIDEMARK_CONFIG_DIR, else $XDG_CONFIG_HOME/tidemark, else ~/.config/tidemark', () => {
    expect(loadClientConfig({ HOME: '/home/a', TIDEMARK_CONFIG_DIR: '/etc/tm' }).configDir).toBe('/etc/tm');
    expect(loadClientConfig({ HOME: '/home/a', XDG_CONFIG_HOME: '/xdg' }).configDir).toBe('/xdg/tidemark');
    expect(loadClientConfig({ HOME: '/home/a' }).configDir).toBe(path.join('/home/a', '.config', 'tidemark'));
  });

  it('reads TIDEMARK_URL, TIDEMARK_SESSION and TIDEMARK_SITE_ID; empty means unset', () => {
    const site = 'A1B2C3D4-0000-4000-8000-000000000000';
    expect(
      loadClientConfig({
        HOME: '/h',
        TIDEMARK_URL: 'https://a.example',
        TIDEMARK_SESSION: 's',
        TIDEMARK_SITE_ID: site,
      }),
    ).toEqual({ url: 'https://a.example', session: 's', siteId: site.toLowerCase(), configDir: '/h/.config/tidemark' });
    expect(loadClientConfig({ HOME: '/h', TIDEMARK_URL: '', TIDEMARK_SESSION: '' })).toEqual({
      url: undefined,
      session: undefined,
      siteId: undefined,
      configDir: '/h/.config/tidemark',
    });
  });

  it('names a bad variable, and never shows the session', () => {
    expect(() => loadClientConfig({ TIDEMARK_URL: 'ftp://x' })).toThrow(
      new ConfigError('TIDEMARK_URL', 'must be a URL (http: or https:) (got "ftp://x")'),
    );
    expect(() => loadClientConfig({ TIDEMARK_SITE_ID: 'site' })).toThrow(/TIDEMARK_SITE_ID must be a website id/);
    expect(() => loadClientConfig({ TIDEMARK_SESSION: 'x'.repeat(600) })).toThrow(
      /TIDEMARK_SESSION .*\(value not shown\)$/,
    );
  });

  it('does not need any of the server’s settings, even in production', () => {
    expect(() => loadClientConfig({ NODE_ENV: 'production', HOME: '/h' })).not.toThrow();
  });
});
