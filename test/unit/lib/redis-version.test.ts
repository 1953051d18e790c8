import { redisVersionSupported } from '../../../lib/redis';

const info = (version: string) => `# Server\r\nredis_version:${version}\r\nredis_git_sha1:00000000\r\n`;

describe('redisVersionSupported (scripts declare flags: Redis 7 or later)', () => {
  it.each([
    ['7.0.0', true],
    ['7.0.15', true],
    ['7.2.4', true],
    ['8.0.1', true],
    ['10.0.0', true],
    ['6.2.14', false],
    ['6.0.0', false],
    ['5.0.7', false],
  ])('%s → %s', (version, supported) => {
    expect(redisVersionSupported(info(version))).toBe(supported);
  });

  it('is false when the reply names no version', () => {
    expect(redisVersionSupported('# Server\r\nredis_mode:standalone\r\n')).toBe(false);
  });
});
