// Traffic source of a visit (DESIGN §3): utm_source when present, else the referrer's registrable domain
// mapped to a known name, else "Direct / None".
export const DIRECT = 'Direct / None';

const KNOWN: Record<string, string> = {
  google: 'Google',
  bing: 'Bing',
  duckduckgo: 'DuckDuckGo',
  yahoo: 'Yahoo',
  yandex: 'Yandex',
  baidu: 'Baidu',
  ecosia: 'Ecosia',
  brave: 'Brave Search',
  facebook: 'Facebook',
  fb: 'Facebook',
  instagram: 'Instagram',
  twitter: 'Twitter',
  't.co': 'Twitter',
  x: 'Twitter',
  linkedin: 'LinkedIn',
  lnkd: 'LinkedIn',
  reddit: 'Reddit',
  youtube: 'YouTube',
  pinterest: 'Pinterest',
  tiktok: 'TikTok',
  github: 'GitHub',
  'news.ycombinator': 'Hacker News',
  producthunt: 'Product Hunt',
  medium: 'Medium',
  chatgpt: 'ChatGPT',
  perplexity: 'Perplexity',
};

// Second-level labels under which registrations happen (example.co.uk → example).
const SECOND_LEVEL = new Set(['co', 'com', 'org', 'net', 'ac', 'gov', 'edu', 'ne', 'or']);

/** The host of a referrer URL, lower case, without www.; '' when it is not a URL. */
export function referrerDomain(referrer: string | undefined): string {
  if (!referrer) return '';
  try {
    return new URL(referrer).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
}

/** The name a domain is known by, or the domain itself. */
export function sourceFromDomain(domain: string): string {
  if (!domain) return DIRECT;
  const labels = domain.split('.');
  if (KNOWN[domain]) return KNOWN[domain];
  for (let i = 0; i < labels.length - 1; i++) {
    const candidate = labels.slice(i, -1).join('.');
    if (KNOWN[candidate]) return KNOWN[candidate];
  }
  // google.co.uk, google.com.br → google
  const main =
    labels.length >= 3 && SECOND_LEVEL.has(labels[labels.length - 2])
      ? labels[labels.length - 3]
      : labels[labels.length - 2];
  return (main && KNOWN[main]) || domain;
}

export function sourceName(utmSource: string | undefined, referrerHost: string, ownHost: string): string {
  if (utmSource?.trim()) return utmSource.trim();
  // A referrer from the site itself is navigation, not a source.
  if (!referrerHost || referrerHost === ownHost.replace(/^www\./, '')) return DIRECT;
  return sourceFromDomain(referrerHost);
}
