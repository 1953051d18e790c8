import { CHANNELS, channelOf } from '../../../../lib/stats/channel';
import { CHANNEL_CASES } from '../../../helpers/channelCases';

describe('channelOf', () => {
  it.each(CHANNEL_CASES)('%s', (_name, input, channel) => {
    expect(channelOf(input)).toBe(channel);
  });

  it('names only documented channels', () => {
    for (const [, input] of CHANNEL_CASES) expect(CHANNELS).toContain(channelOf(input));
  });
});
