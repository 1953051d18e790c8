// Visits' source values and the channel each belongs to, worked out by hand from the rules in docs/api.md
// ("Channels"): the unit tests check channelOf on them, the integration tests the SQL ClickHouse runs.
import type { Channel, ChannelInput } from '../../lib/stats/channel';

const visit = (over: Partial<ChannelInput>): ChannelInput => ({
  source: 'Direct / None',
  utmSource: '',
  utmMedium: '',
  utmCampaign: '',
  referrer: '',
  ...over,
});

export const CHANNEL_CASES: [string, ChannelInput, Channel][] = [
  ['no referrer, no utm', visit({}), 'Direct'],
  ['a Google search result', visit({ source: 'Google', referrer: 'google.com' }), 'Organic Search'],
  [
    'an unnamed search site by its main label',
    visit({ source: 'search.naver.com', referrer: 'search.naver.com' }),
    'Organic Search',
  ],
  ['google / cpc', visit({ source: 'google', utmSource: 'google', utmMedium: 'cpc' }), 'Paid Search'],
  ['Google / CPC in capitals', visit({ source: 'Google', utmSource: 'Google', utmMedium: 'CPC' }), 'Paid Search'],
  ['an ad-tagged source without medium', visit({ source: 'googleads', utmSource: 'googleads' }), 'Paid Search'],
  ['adwords / ppc', visit({ source: 'adwords', utmSource: 'adwords', utmMedium: 'ppc' }), 'Paid Search'],
  ['a Facebook link', visit({ source: 'Facebook', referrer: 'facebook.com' }), 'Organic Social'],
  ['fb / paid_social', visit({ source: 'fb', utmSource: 'fb', utmMedium: 'paid_social' }), 'Paid Social'],
  ['facebook_feed_ad', visit({ source: 'facebook_feed_ad', utmSource: 'facebook_feed_ad' }), 'Paid Social'],
  ['yt-ads', visit({ source: 'yt-ads', utmSource: 'yt-ads' }), 'Paid Video'],
  ['a YouTube link', visit({ source: 'YouTube', referrer: 'youtube.com' }), 'Organic Video'],
  ['newsletter / email', visit({ source: 'newsletter', utmSource: 'newsletter', utmMedium: 'email' }), 'Email'],
  ['a webmail referrer named Google', visit({ source: 'Google', referrer: 'mail.google.com' }), 'Email'],
  ['partner / affiliate', visit({ source: 'partner', utmSource: 'partner', utmMedium: 'affiliate' }), 'Affiliates'],
  ['spotify / audio', visit({ source: 'spotify', utmSource: 'spotify', utmMedium: 'audio' }), 'Audio'],
  ['sms', visit({ source: 'sms', utmSource: 'sms' }), 'SMS'],
  [
    'firebase / push',
    visit({ source: 'firebase', utmSource: 'firebase', utmMedium: 'push' }),
    'Mobile Push Notifications',
  ],
  ['an unknown blog', visit({ source: 'blog.example.org', referrer: 'blog.example.org' }), 'Referral'],
  ['criteo / display', visit({ source: 'criteo', utmSource: 'criteo', utmMedium: 'display' }), 'Display'],
  ['criteo / cpc', visit({ source: 'criteo', utmSource: 'criteo', utmMedium: 'cpc' }), 'Paid Other'],
  ['amazon / cpc', visit({ source: 'amazon', utmSource: 'amazon', utmMedium: 'cpc' }), 'Paid Shopping'],
  [
    'a shop campaign',
    visit({ source: 'partner', utmSource: 'partner', utmCampaign: 'summer-shop' }),
    'Organic Shopping',
  ],
  [
    '"workshop" is no shop campaign',
    visit({ source: 'partner', utmSource: 'partner', utmMedium: 'referral', utmCampaign: 'workshop' }),
    'Referral',
  ],
  [
    'a cross-network campaign',
    visit({ source: 'google', utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'q3-cross-network' }),
    'Cross-network',
  ],
  ['partner / social', visit({ source: 'partner', utmSource: 'partner', utmMedium: 'social' }), 'Organic Social'],
  ['partner / organic', visit({ source: 'partner', utmSource: 'partner', utmMedium: 'organic' }), 'Organic Search'],
  ['utm_source x', visit({ source: 'x', utmSource: 'x' }), 'Organic Social'],
  ['a medium without a source', visit({ utmMedium: 'referral' }), 'Referral'],
  ['Hacker News', visit({ source: 'Hacker News', referrer: 'news.ycombinator.com' }), 'Organic Social'],
  ['ChatGPT', visit({ source: 'ChatGPT', referrer: 'chatgpt.com' }), 'Organic Search'],
];
