// Acquisition channels (visit:channel, docs/api.md "Channels"): a visit's channel decided from its first
// pageview's source name, utm_source, utm_medium, utm_campaign and referrer domain, by GA4's default channel
// group rules as Plausible applies them (ordered; the first that holds wins). One rule table serves both the
// query (channelSql, evaluated by ClickHouse at query time, so every stored visit has one) and channelOf,
// the same rules in TypeScript that the unit tests read as the specification.
import { DIRECT } from '../ingest/accept/source';

export const CHANNELS = [
  'Cross-network',
  'Paid Shopping',
  'Paid Search',
  'Paid Social',
  'Paid Video',
  'Display',
  'Paid Other',
  'Organic Shopping',
  'Organic Social',
  'Organic Video',
  'Organic Search',
  'Email',
  'Affiliates',
  'Audio',
  'SMS',
  'Mobile Push Notifications',
  'Referral',
  'Direct',
] as const;
export type Channel = (typeof CHANNELS)[number];

type Category = 'search' | 'social' | 'video' | 'shopping' | 'email';

/** Known sites by the lower-case name a source or its domain's main label has (source.ts names them). */
const SITES: Record<Category, readonly string[]> = {
  search: [
    'google',
    'bing',
    'duckduckgo',
    'yahoo',
    'yahoo!',
    'yandex',
    'baidu',
    'ecosia',
    'brave',
    'brave search',
    'qwant',
    'startpage',
    'naver',
    'seznam',
    'sogou',
    'ask',
    'aol',
    'kagi',
    'perplexity',
    'chatgpt',
    'chatgpt.com',
  ],
  social: [
    'facebook',
    'fb',
    'instagram',
    'ig',
    'twitter',
    'x',
    't.co',
    'linkedin',
    'lnkd',
    'reddit',
    'pinterest',
    'tiktok',
    'threads',
    'mastodon',
    'bluesky',
    'bsky',
    'tumblr',
    'vk',
    'vkontakte',
    'telegram',
    'discord',
    'slack',
    'whatsapp',
    'snapchat',
    'quora',
    'hacker news',
    'news.ycombinator',
    'product hunt',
    'producthunt',
    'github',
    'medium',
    'weibo',
    'wechat',
  ],
  video: ['youtube', 'yt', 'vimeo', 'twitch', 'dailymotion'],
  shopping: ['amazon', 'ebay', 'etsy', 'shopify', 'walmart', 'aliexpress', 'alibaba', 'temu', 'mercadolibre'],
  email: ['gmail', 'outlook', 'email', 'e-mail', 'e_mail', 'e mail', 'newsletter'],
};
/** Webmail hosts: a referrer from one is an email click, though its source name is the provider's. */
const EMAIL_REFERRERS = [
  'mail.google.com',
  'outlook.live.com',
  'outlook.office.com',
  'mail.yahoo.com',
  'mail.proton.me',
];
const SECOND_LEVEL = ['co', 'com', 'org', 'net', 'ac', 'gov', 'edu', 'ne', 'or'];
const EMAIL_TAGS = ['email', 'e-mail', 'e_mail', 'e mail', 'newsletter'];
const SOCIAL_MEDIUMS = ['social', 'social-network', 'social-media', 'sm', 'social network', 'social media'];
const DISPLAY_MEDIUMS = ['display', 'banner', 'expandable', 'interstitial', 'cpm'];
/** RE2 and JavaScript read these alike. */
const PAID_MEDIUM = '^(.*cp.*|ppc|retargeting|paid.*)$';
const SHOP_CAMPAIGN = '^(.*(([^a-df-z]|^)shop|shopping).*)$';
/** An ad-tagged utm_source ("googleads", "fb-ads", "facebook_feed_ad"): what is left is the site. */
const AD_SUFFIX = '[-_ ]?(feed[-_ ]?)?ads?$';

const NAMES = Object.values(SITES).flat();
const CATEGORIES = (Object.entries(SITES) as [Category, readonly string[]][]).flatMap(([c, names]) =>
  names.map(() => c),
);

function category(name: string): Category | '' {
  const i = NAMES.indexOf(name);
  return i < 0 ? '' : CATEGORIES[i];
}

/** The main label of a dotted name (news.google.co.uk → google), '' for a name without a dot. */
function mainLabel(name: string): string {
  const labels = name.split('.');
  if (labels.length < 2) return '';
  return labels.length >= 3 && SECOND_LEVEL.includes(labels[labels.length - 2])
    ? labels[labels.length - 3]
    : labels[labels.length - 2];
}

const categoryOf = (name: string): Category | '' => category(name) || category(mainLabel(name));

/** A visit's values the channel is decided from; '' for what it lacks. */
export interface ChannelInput {
  /** The visit's source name (utm_source when given, else the referrer's known name or domain, else Direct / None). */
  source: string;
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
  /** The first pageview's referrer domain. */
  referrer: string;
}

/** The channel of a visit's values (the specification of channelSql). */
export function channelOf(v: ChannelInput): Channel {
  const src = v.source === DIRECT ? '' : v.source.toLowerCase();
  const [s, m, c, ref] = [v.utmSource, v.utmMedium, v.utmCampaign, v.referrer].map((x) => x.toLowerCase());
  const cat = s === '' && EMAIL_REFERRERS.includes(ref) ? 'email' : categoryOf(src);
  const adSite = /(ad|ads)$/.test(s) ? s.replace(new RegExp(AD_SUFFIX), '') : '';
  const adCat = s === 'adwords' ? 'search' : adSite === '' || adSite === s ? '' : categoryOf(adSite);
  const paid = new RegExp(PAID_MEDIUM).test(m);
  const shopCampaign = new RegExp(SHOP_CAMPAIGN).test(c);
  const has = (x: string, tags: readonly string[]) => tags.some((t) => x.includes(t));
  if (m === 'cross-network' || c.includes('cross-network')) return 'Cross-network';
  if ((cat === 'shopping' || shopCampaign) && paid) return 'Paid Shopping';
  if ((cat === 'search' && paid) || adCat === 'search') return 'Paid Search';
  if ((cat === 'social' && paid) || adCat === 'social') return 'Paid Social';
  if ((cat === 'video' && paid) || adCat === 'video') return 'Paid Video';
  if (DISPLAY_MEDIUMS.includes(m)) return 'Display';
  if (paid) return 'Paid Other';
  if (cat === 'shopping' || shopCampaign) return 'Organic Shopping';
  if (cat === 'social' || SOCIAL_MEDIUMS.includes(m)) return 'Organic Social';
  if (cat === 'video' || m.includes('video')) return 'Organic Video';
  if (cat === 'search' || m === 'organic') return 'Organic Search';
  if (cat === 'email' || has(s, EMAIL_TAGS) || has(m, EMAIL_TAGS)) return 'Email';
  if (m === 'affiliate' || m === 'affiliates') return 'Affiliates';
  if (m === 'audio') return 'Audio';
  if (s === 'sms' || m === 'sms') return 'SMS';
  if (m.endsWith('push') || has(m, ['mobile', 'notification']) || s === 'firebase') return 'Mobile Push Notifications';
  if (['referral', 'app', 'link'].includes(m) || src !== '') return 'Referral';
  return 'Direct';
}

// ---- the same rules in SQL: constants only (no request value is ever part of them) --------------------

const lit = (x: string) => `'${x.replace(/[\\']/g, '\\$&')}'`;
const arr = (xs: readonly string[]) => `[${xs.map(lit).join(', ')}]`;
const categorySql = (x: string) => `transform(${x}, ${arr(NAMES)}, ${arr(CATEGORIES)}, '')`;
const mainLabelSql = (x: string) =>
  `if(length(splitByChar('.', ${x})) < 2, '', if(length(splitByChar('.', ${x})) >= 3 AND has(${arr(SECOND_LEVEL)}, splitByChar('.', ${x})[-2]), splitByChar('.', ${x})[-3], splitByChar('.', ${x})[-2]))`;
const categoryOfSql = (x: string) => `if(${categorySql(x)} != '', ${categorySql(x)}, ${categorySql(mainLabelSql(x))})`;
const hasSql = (x: string, tags: readonly string[]) => `multiSearchAny(${x}, ${arr(tags)})`;

/**
 * The channel of the visit values given as SQL expressions, '' when `source` is '' (a session without a
 * pageview has no visit values). Each input is named once: a one-element arrayMap binds them to names.
 */
export function channelSql(v: ChannelInput): string {
  const body = `multiIf(
    m = 'cross-network' OR position(c, 'cross-network') > 0, 'Cross-network',
    (cat = 'shopping' OR shop) AND paid, 'Paid Shopping',
    (cat = 'search' AND paid) OR adcat = 'search', 'Paid Search',
    (cat = 'social' AND paid) OR adcat = 'social', 'Paid Social',
    (cat = 'video' AND paid) OR adcat = 'video', 'Paid Video',
    has(${arr(DISPLAY_MEDIUMS)}, m), 'Display',
    paid, 'Paid Other',
    cat = 'shopping' OR shop, 'Organic Shopping',
    cat = 'social' OR has(${arr(SOCIAL_MEDIUMS)}, m), 'Organic Social',
    cat = 'video' OR position(m, 'video') > 0, 'Organic Video',
    cat = 'search' OR m = 'organic', 'Organic Search',
    cat = 'email' OR ${hasSql('s', EMAIL_TAGS)} OR ${hasSql('m', EMAIL_TAGS)}, 'Email',
    m IN ('affiliate', 'affiliates'), 'Affiliates',
    m = 'audio', 'Audio',
    s = 'sms' OR m = 'sms', 'SMS',
    endsWith(m, 'push') OR ${hasSql('m', ['mobile', 'notification'])} OR s = 'firebase', 'Mobile Push Notifications',
    m IN ('referral', 'app', 'link') OR src != '', 'Referral',
    'Direct')`;
  const derived = `arrayMap((cat, adcat, paid, shop) -> ${body},
    [if(s = '' AND has(${arr(EMAIL_REFERRERS)}, ref), 'email', ${categoryOfSql('src')})],
    [if(s = 'adwords', 'search', if(NOT match(s, '(ad|ads)$') OR replaceRegexpOne(s, ${lit(AD_SUFFIX)}, '') IN ('', s), '', ${categoryOfSql(`replaceRegexpOne(s, ${lit(AD_SUFFIX)}, '')`)}))],
    [match(m, ${lit(PAID_MEDIUM)})], [match(c, ${lit(SHOP_CAMPAIGN)})])[1]`;
  return `arrayMap((raw, src, s, m, c, ref) -> if(raw = '', '', ${derived}),
    [toString(${v.source})], [lower(if(toString(${v.source}) = ${lit(DIRECT)}, '', toString(${v.source})))],
    [lower(toString(${v.utmSource}))], [lower(toString(${v.utmMedium}))], [lower(toString(${v.utmCampaign}))], [lower(toString(${v.referrer}))])[1]`;
}
