// The page and traffic-source columns of an event row, parsed the same way for both ingestion paths (a
// server pageview's props fill "the same columns as browser data", DESIGN §3): host and decoded path of the
// page URL, a relative URL taken as a page of the website's domain; UTM values from the query (cut to 256
// characters) unless the sender gave its own; the referrer's domain; the source (source.ts), for pageviews.
import type { EventRow } from '../job/rows';
import { referrerDomain, sourceName } from './source';

export type PageColumns = Pick<
  EventRow,
  | 'url'
  | 'hostname'
  | 'pathname'
  | 'referrer'
  | 'referrer_domain'
  | 'source_name'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'utm_content'
  | 'utm_term'
>;

/** The columns of an event that concerns no page (server events other than pageviews). */
export const NO_PAGE: PageColumns = {
  url: '',
  hostname: '',
  pathname: '',
  referrer: '',
  referrer_domain: '',
  source_name: '',
  utm_source: '',
  utm_medium: '',
  utm_campaign: '',
  utm_content: '',
  utm_term: '',
};

export const UTM_PARAMS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;
const UTM_MAX = 256;

/** Where a page URL points; utm holds the query's values of UTM_PARAMS, '' when absent. */
export interface PageLocation {
  hostname: string;
  pathname: string;
  utm: readonly string[];
}

/**
 * What one request's pages and referrers parse to, by URL, and the columns of its pageviews by URL and
 * referrer (those whose sender gave no UTM values of its own). A batch repeats a site's few pages and
 * referrers many times, and parsing a URL was the costliest step of building a row.
 */
export interface PageMemo {
  pages: Map<string, PageLocation>;
  referrerDomains: Map<string, string>;
  pageviews: Map<string, Map<string, PageColumns>>;
}

export function pageMemo(): PageMemo {
  return { pages: new Map(), referrerDomains: new Map(), pageviews: new Map() };
}

/** The website a page belongs to: its domain, and the memo of the request when there is one. */
export interface PageSite {
  domain: string;
  memo?: PageMemo;
}

const NO_UTM: readonly string[] = UTM_PARAMS.map(() => '');

function parsePageUrl(url: string, domain: string): PageLocation {
  try {
    const parsed = new URL(url, `https://${domain}`);
    const query = parsed.searchParams;
    return {
      hostname: parsed.hostname.toLowerCase(),
      pathname: decodeSafe(parsed.pathname),
      utm: UTM_PARAMS.map((name) => query.get(name)?.slice(0, UTM_MAX) || ''),
    };
  } catch {
    return { hostname: '', pathname: url.split(/[?#]/)[0], utm: NO_UTM };
  }
}

function decodeSafe(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path; // kept percent-encoded
  }
}

/** Where a page URL of the website points (memoised per request). */
export function locatePage(site: PageSite, url: string): PageLocation {
  const memo = site.memo;
  if (!memo) return parsePageUrl(url, site.domain);
  let loc = memo.pages.get(url);
  if (!loc) {
    loc = parsePageUrl(url, site.domain);
    memo.pages.set(url, loc);
  }
  return loc;
}

function memoReferrerDomain(site: PageSite, referrer: string): string {
  if (!referrer) return '';
  const memo = site.memo;
  if (!memo) return referrerDomain(referrer);
  let domain = memo.referrerDomains.get(referrer);
  if (domain === undefined) {
    domain = referrerDomain(referrer);
    memo.referrerDomains.set(referrer, domain);
  }
  return domain;
}

/** The i-th UTM value: the sender's own when it gave one, else the URL's. */
function utmValue(loc: PageLocation, given: Readonly<Record<string, unknown>> | undefined, i: number): string {
  const own = given?.[UTM_PARAMS[i]];
  return (typeof own === 'string' && own) || loc.utm[i];
}

function hasOwnUtm(given: Readonly<Record<string, unknown>> | undefined): boolean {
  if (!given) return false;
  for (const name of UTM_PARAMS) {
    const own = given[name];
    if (typeof own === 'string' && own) return true;
  }
  return false;
}

/**
 * The page columns of an event on `url` coming from `referrer`. `given` holds the sender's own utm_* values,
 * which win over the URL's; the source is named for pageviews only. `loc` is the URL's locatePage, when the
 * caller has it already. The columns returned may be shared by rows of the request: never changed.
 */
export function pageColumns(
  site: PageSite,
  url: string,
  referrer: string,
  pageview: boolean,
  given?: Readonly<Record<string, unknown>>,
  loc?: PageLocation,
): PageColumns {
  const memo = site.memo;
  if (!memo || !pageview || hasOwnUtm(given))
    return buildColumns(site, url, loc ?? locatePage(site, url), referrer, pageview, given);
  let byReferrer = memo.pageviews.get(url);
  if (!byReferrer) {
    byReferrer = new Map();
    memo.pageviews.set(url, byReferrer);
  }
  let columns = byReferrer.get(referrer);
  if (!columns) {
    columns = buildColumns(site, url, loc ?? locatePage(site, url), referrer, true, undefined);
    byReferrer.set(referrer, columns);
  }
  return columns;
}

function buildColumns(
  site: PageSite,
  url: string,
  loc: PageLocation,
  referrer: string,
  pageview: boolean,
  given: Readonly<Record<string, unknown>> | undefined,
): PageColumns {
  const utmSource = utmValue(loc, given, 0);
  const refDomain = memoReferrerDomain(site, referrer);
  return {
    url,
    hostname: loc.hostname,
    pathname: loc.pathname,
    referrer,
    referrer_domain: refDomain,
    // A referrer from the page's own host is navigation, not a source.
    source_name: pageview ? sourceName(utmSource, refDomain, loc.hostname || site.domain) : '',
    utm_source: utmSource,
    utm_medium: utmValue(loc, given, 1),
    utm_campaign: utmValue(loc, given, 2),
    utm_content: utmValue(loc, given, 3),
    utm_term: utmValue(loc, given, 4),
  };
}
