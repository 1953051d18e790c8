// The deterministic interpreter (issue 27 point 3): reads the common question shapes into a query plan with
// word lists and patterns, no model. It answers when no LLM is configured or the LLM fails; what it cannot
// read is refused (422 with suggestions) rather than guessed.
import type { PlanDimension, PlanFilter, PlanMetric, PlanRange, QueryPlan } from './plan';

/** What the interpreter knows of the website: its goal and custom event names. */
export interface SiteVocabulary {
  goals: readonly string[];
  events: readonly string[];
}

export interface Interpretation {
  plan: QueryPlan;
  /** 0-1: how much of the question the patterns accounted for. */
  confidence: number;
  /** What the question itself named, before defaults: a follow-up changes only these (followUp.ts). */
  said: Said;
}

export interface Said {
  metric?: PlanMetric;
  range?: PlanRange;
  compare: QueryPlan['compare_to'];
  interval: QueryPlan['interval'];
  dimension: PlanDimension | null;
  filters: PlanFilter[];
}

/** Questions that try to reach past the plan (instructions, SQL, secrets, other sites) are refused outright. */
const REFUSED =
  /\b(ignore (all |the |your |previous )|system prompt|instructions?|sql|password|api[ _-]?key|secrets?|tokens?|credentials?|other (web)?sites?|all (web)?sites|every (web)?site)\b|\bselect\b.*\bfrom\b|\b(drop|truncate|alter)\s+table\b|\bdelete\s+from\b|\binsert\s+into\b/i;

const lower = (s: string) => s.toLowerCase();

// ---- countries: every ISO 3166 alpha-2 code Intl names, plus common aliases.
const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
// Codes of countries that no longer exist or of groupings, which share names with current ones.
const LEGACY_CODES = new Set([
  'DD',
  'FX',
  'SU',
  'YU',
  'CS',
  'ZR',
  'TP',
  'BU',
  'NT',
  'YD',
  'QO',
  'EU',
  'EZ',
  'UN',
  'ZZ',
]);
const COUNTRY_BY_NAME = new Map<string, string>();
for (let a = 65; a <= 90; a++) {
  for (let b = 65; b <= 90; b++) {
    const code = String.fromCharCode(a, b);
    let name: string | undefined;
    try {
      name = regionNames.of(code);
    } catch {
      name = undefined;
    }
    // A name two codes share (France: FR and the legacy FX) keeps the first, the current code.
    if (name && name !== code && !LEGACY_CODES.has(code) && !/unknown/i.test(name) && !COUNTRY_BY_NAME.has(lower(name)))
      COUNTRY_BY_NAME.set(lower(name), code);
  }
}
const COUNTRY_ALIASES: Record<string, string> = {
  usa: 'US',
  america: 'US',
  'the us': 'US',
  'the usa': 'US',
  'united states of america': 'US',
  'the united states': 'US',
  uk: 'GB',
  'the uk': 'GB',
  england: 'GB',
  britain: 'GB',
  'great britain': 'GB',
  holland: 'NL',
  'the netherlands': 'NL',
  'south korea': 'KR',
  korea: 'KR',
  russia: 'RU',
  czechia: 'CZ',
  'czech republic': 'CZ',
};
for (const [alias, code] of Object.entries(COUNTRY_ALIASES)) COUNTRY_BY_NAME.set(alias, code);
const COUNTRY_NAMES = [...COUNTRY_BY_NAME.keys()].sort((a, b) => b.length - a.length);
const CODES = new Set(COUNTRY_BY_NAME.values());
const CODE_WORDS_REFUSED = new Set(['IT', 'IN', 'AT', 'BE', 'TO', 'NO', 'IS', 'AS', 'AM', 'ME', 'MY', 'OR', 'SO']);

// ---- dimension values the questions name.
const DEVICES: Record<string, string> = {
  mobile: 'mobile',
  phone: 'mobile',
  phones: 'mobile',
  smartphone: 'mobile',
  smartphones: 'mobile',
  desktop: 'desktop',
  desktops: 'desktop',
  computer: 'desktop',
  computers: 'desktop',
  tablet: 'tablet',
  tablets: 'tablet',
};
const BROWSERS: Record<string, string> = {
  chrome: 'Chrome',
  firefox: 'Firefox',
  safari: 'Safari',
  edge: 'Edge',
  opera: 'Opera',
  'samsung internet': 'Samsung Internet',
  brave: 'Brave',
};
const OSES: Record<string, string> = {
  windows: 'Windows',
  macos: 'macOS',
  'mac os': 'macOS',
  mac: 'macOS',
  ios: 'iOS',
  iphone: 'iOS',
  android: 'Android',
  linux: 'Linux',
  'chrome os': 'Chrome OS',
};
const SOURCES: Record<string, string> = {
  google: 'Google',
  bing: 'Bing',
  duckduckgo: 'DuckDuckGo',
  facebook: 'Facebook',
  twitter: 'Twitter',
  x: 'Twitter',
  linkedin: 'LinkedIn',
  reddit: 'Reddit',
  youtube: 'YouTube',
  instagram: 'Instagram',
  'hacker news': 'Hacker News',
  github: 'GitHub',
};

// ---- words for metrics and dimensions; the first match in the listed order wins.
const METRIC_WORDS: [RegExp, PlanMetric][] = [
  [
    /\bconversion rates?\b|\bconvert(s|ed|ing)?\b.*\brate\b|\bconversion %|\bconversion percentage\b/,
    'conversion_rate',
  ],
  [/\brevenue\b|\bsales\b|\bearn(ed|ings)?\b|\bincome\b|\bmoney\b|\bmade\b|\bturnover\b/, 'revenue'],
  [/\bbounce rates?\b|\bbounces?\b|\bbounced\b/, 'bounce_rate'],
  [
    /\b(visit|session) (duration|length)s?\b|\btime on (site|the site)\b|\bhow long\b|\bavg\.? duration\b|\baverage duration\b/,
    'visit_duration',
  ],
  [/\bpage ?views?\b|\bpages? viewed\b|\bviews\b|\bhits\b/, 'pageviews'],
  [/\bconversions?\b|\bcompletions?\b|\bconverted\b|\bconvert(s|ing)?\b/, 'conversions'],
  [/\bvisits\b|\bsessions?\b/, 'visits'],
  [/\bevents\b/, 'events'],
  [/\bvisitors?\b|\busers?\b|\bpeople\b|\buniques?\b|\btraffic\b|\baudience\b|\bguests?\b/, 'visitors'],
];

const DIMENSION_WORDS: [RegExp, PlanDimension][] = [
  [/\bentry pages?\b|\blanding pages?\b|\bentrances?\b/, 'entry_page'],
  [/\bexit pages?\b|\bexits?\b/, 'exit_page'],
  [/\butm[ _]sources?\b/, 'utm_source'],
  [/\butm[ _]mediums?\b|\bmediums?\b/, 'utm_medium'],
  [/\bcampaigns?\b|\butm[ _]campaigns?\b/, 'utm_campaign'],
  [/\bchannels?\b/, 'channel'],
  [/\bpages?\b|\burls?\b|\bpaths?\b|\barticles?\b|\bposts?\b|\bcontent\b/, 'page'],
  [
    /\bcountr(y|ies)\b|\bnations?\b|\bwhere (are|is|do)\b.*\b(visitors|users|people)\b.*\bfrom\b|\blocations?\b|\bgeograph/,
    'country',
  ],
  [/\bbrowsers?\b/, 'browser'],
  [/\bdevices?\b|\bdevice types?\b/, 'device'],
  [/\boperating systems?\b|\boses\b|\b\s?os\b|\bplatforms?\b/, 'os'],
  [/\bsources?\b|\breferr(er|ers|al|als|ing sites?)\b|\bwhere\b.*\bcome from\b|\bcoming from\b/, 'source'],
  [/\bgoals?\b/, 'goal'],
  [/\bcustom events?\b|\bevents?\b/, 'event'],
];

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twenty: 20,
};

interface RangeHit {
  range: PlanRange;
  compare?: QueryPlan['compare_to'];
}

/** The comparison a question asks for, and the question with those words taken out (so "last year" there is no range). */
function readCompare(q: string): { compare: QueryPlan['compare_to']; rest: string } {
  const year =
    /\b(compared (to|with)|vs\.?|versus|than|against|over|from)\s+(the same (period|time|week|month) )?(last|previous|a) year\b|\byear[- ]over[- ]year\b|\byoy\b|\b(a|one) year (ago|earlier|before)\b|\bsame (period|time|week|month) last year\b/;
  const m = year.exec(q);
  if (m) return { compare: 'previous_year', rest: q.replace(m[0], ' ') };
  const period =
    /\b(compared (to|with)|vs\.?|versus|than|against)\s+(the )?(previous|prior|last|preceding|past) (period|week|month|7 days|30 days|days?)\b|\b(compared (to|with)|vs\.?|versus)\s+(the period )?before\b|\bprevious period\b|\bperiod[- ]over[- ]period\b|\bweek[- ]over[- ]week\b|\bmonth[- ]over[- ]month\b|\bwow\b|\bmom\b|\b(go(ne)?|went|gone) (up|down)\b|\b(grow|grew|grown|growth|increase[ds]?|decrease[ds]?|declin(e|ed|ing)|drop(ped)?|change[ds]?|changing|trend(ing)? up)\b|\bcompared?\b|\bcomparison\b/;
  const p = period.exec(q);
  if (p) return { compare: 'previous_period', rest: q.replace(p[0], ' ') };
  return { compare: null, rest: q };
}

function readRange(q: string): RangeHit | undefined {
  const table: [RegExp, PlanRange][] = [
    [/\b(last|past) 24 ?(hours|hrs|h)\b|\b24h\b|\bpast day\b|\blast day\b/, '24h'],
    [/\btoday\b|\bso far today\b|\bthis morning\b/, 'today'],
    [/\byesterday\b/, 'yesterday'],
    [/\bthis week\b|\bweek to date\b|\bso far this week\b/, 'this_week'],
    [/\blast week\b|\bprevious week\b/, 'last_week'],
    [/\bthis month\b|\bmonth to date\b|\bso far this month\b|\bmtd\b/, 'this_month'],
    [/\blast month\b|\bprevious month\b/, 'last_month'],
    [/\b(last|past) (7|seven) days\b|\b7 ?d\b|\bpast week\b/, '7d'],
    [/\b(last|past) (30|thirty) days\b|\b30 ?d\b|\bpast month\b/, '30d'],
    [/\b(last|past) (90|ninety) days\b|\b90 ?d\b|\b(last|past) (3|three) months\b|\bquarter\b/, '90d'],
    [/\b(last|past) (365|12|twelve) (days|months)\b|\bthis year\b|\bpast year\b|\blast year\b|\b1y\b/, '1y'],
    [/\bweek\b/, '7d'],
    [/\bmonth\b/, '30d'],
    [/\byear\b/, '1y'],
  ];
  // "by week", "monthly" name the interval, not the range.
  const text = q.replace(
    /\b(per|by|each|every) (hour|day|week|month)\b|\b(hour|day|week|month) by (hour|day|week|month)\b/g,
    ' ',
  );
  for (const [re, range] of table) if (re.test(text)) return { range };
  return undefined;
}

function readInterval(q: string): QueryPlan['interval'] {
  if (/\b(per|by|each|every) hour\b|\bhourly\b|\bhour by hour\b/.test(q)) return 'hour';
  if (/\b(per|by|each|every) week\b|\bweekly\b|\bweek by week\b/.test(q)) return 'week';
  if (/\b(per|by|each|every) month\b|\bmonthly\b|\bmonth by month\b/.test(q)) return 'month';
  if (/\b(per|by|each|every) day\b|\bdaily\b|\bday by day\b/.test(q)) return 'day';
  return null;
}

const TREND =
  /\btrends?\b|\bover time\b|\btimeline\b|\btime ?series\b|\bchart\b|\bgraph\b|\bplot\b|\bevolution\b|\bhistory\b/;
const REALTIME =
  /\bright now\b|\bcurrently\b|\bat the moment\b|\bonline\b|\blive\b|\bactive (visitors|users|now)\b|\bat this moment\b|\bnow\b/;

/** Words for a dimension's named value, longest first, matched as whole words. */
function findValue(q: string, table: Record<string, string>): string | undefined {
  for (const word of Object.keys(table).sort((a, b) => b.length - a.length)) {
    if (new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(q)) return table[word];
  }
  return undefined;
}

/** A site's name (goal or event) in the question, plural or not, longest first. */
function findName(q: string, names: readonly string[]): string | undefined {
  for (const name of [...names].sort((a, b) => b.length - a.length)) {
    const n = lower(name)
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/[_-]/g, '[ _-]?');
    if (new RegExp(`\\b${n}(s|es|ed)?\\b`).test(q)) return name;
    // A compound verb's name ("Signup") also reads as the verb: "signed up", "signing up".
    const verb = /^([a-z]+?)[ _-]?(up|in|out)$/.exec(lower(name));
    if (verb && new RegExp(`\\b${verb[1]}(s|ed|ing)? ${verb[2]}\\b`).test(q)) return name;
  }
  return undefined;
}

function readCountry(original: string, q: string): string | undefined {
  for (const name of COUNTRY_NAMES) {
    const re = new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
    if (re.test(q)) return COUNTRY_BY_NAME.get(name);
  }
  // Codes only in capitals and after "from"/"in" (so "in" or "us" as words are not countries).
  const m = /\b(?:from|in|for)\s+(?:the\s+)?([A-Z]{2})\b/.exec(original);
  if (m && CODES.has(m[1]) && !CODE_WORDS_REFUSED.has(m[1])) return m[1];
  const c = /\bcountry(?:\s+code\s*|\s*[=:]\s*)([A-Za-z]{2})\b/.exec(original);
  if (c && CODES.has(c[1].toUpperCase())) return c[1].toUpperCase();
  return undefined;
}

function readLimit(q: string): number | undefined {
  const m = /\btop\s+(\d{1,3}|[a-z]+)\b/.exec(q) ?? /\b(\d{1,3}|[a-z]+)\s+(most|best|biggest|largest|top)\b/.exec(q);
  if (!m) return undefined;
  const n = /^\d+$/.test(m[1]) ? Number(m[1]) : NUMBER_WORDS[m[1]];
  return n ? Math.min(100, Math.max(1, n)) : undefined;
}

/** Reads a question; undefined when it is not one of the shapes the interpreter knows (or is refused). */
export function interpret(question: string, vocab: SiteVocabulary): Interpretation | undefined {
  const original = question.trim();
  if (!original || REFUSED.test(original)) return undefined;
  let q = ` ${lower(original)
    .replace(/[?!,;]+/g, ' ')
    .replace(/\s+/g, ' ')} `;
  let score = 0.5;

  // Names of the site's goals and events first: "signups" must not read as anything else.
  const goal = findName(q, vocab.goals);
  const event = goal ? undefined : findName(q, vocab.events);

  const { compare, rest } = readCompare(q);
  q = rest;
  const rangeHit = readRange(q);
  const interval = readInterval(q);
  const filters: PlanFilter[] = [];
  const country = readCountry(original, q);
  if (country) filters.push({ key: 'country', operator: 'is', value: country });
  const device = findValue(q, DEVICES);
  if (device) filters.push({ key: 'device', operator: 'is', value: device });
  const browser = findValue(q, BROWSERS);
  if (browser) filters.push({ key: 'browser', operator: 'is', value: browser });
  const os = browser === 'Chrome' && /\bchrome os\b/.test(q) ? 'Chrome OS' : findValue(q, OSES);
  if (os && !(os === 'Chrome OS' && browser)) filters.push({ key: 'os', operator: 'is', value: os });
  const source = findValue(q, SOURCES);
  if (source && /\b(from|via|through|on|referred|source|traffic)\b/.test(q))
    filters.push({ key: 'source', operator: 'is', value: source });
  const page = /(?:^|\s)(\/[A-Za-z0-9_\-./%~]*)/.exec(original);
  if (page) filters.push({ key: 'page', operator: 'is', value: page[1] });
  if (goal) filters.push({ key: 'goal', operator: 'is', value: goal });
  if (event) filters.push({ key: 'event', operator: 'is', value: event });

  // Dimension: "top/which/most/by X", with the filtered keys' own words taken out first.
  let dimension: PlanDimension | null = null;
  const asksRanking =
    /\btop\b|\bwhich\b|\bwhat (are|were|is|was) (the|my|our)\b|\bmost\b|\bbest\b|\bbiggest\b|\blargest\b|\bleading\b|\bby\b|\bper\b|\bbreak ?down\b|\bsplit\b|\brank(ed|ing)?\b|\blist\b|\bshow me (the|my|our)\b|\bwhere\b/.test(
      q,
    );
  if (asksRanking) {
    for (const [re, d] of DIMENSION_WORDS) {
      if (d === 'goal' && goal) continue;
      if (d === 'event' && (event || goal)) continue;
      if (
        d === 'page' &&
        /\bpage ?views?\b/.test(q) &&
        !/\b(top( \d+| [a-z]+)?|which|most|by|per) (pages|urls)\b/.test(q)
      )
        continue;
      if (re.test(q)) {
        dimension = d;
        break;
      }
    }
  }
  if (dimension === 'event' && /\bevents\b/.test(q) && !/\b(which|top|what|by|per|most|custom)\b/.test(q))
    dimension = null;

  let metric: PlanMetric | undefined;
  for (const [re, m] of METRIC_WORDS) {
    if (re.test(q)) {
      metric = m;
      break;
    }
  }
  const said: Said = { metric, range: rangeHit?.range, compare, interval, dimension, filters };
  const realtime = REALTIME.test(q) && !rangeHit && !/\bnow\b.*\b(than|compared)\b/.test(q);
  const trend = interval !== null || TREND.test(q);

  if (realtime) {
    const pages = dimension === 'page';
    return {
      plan: {
        intent: 'realtime',
        metrics: [metric === 'pageviews' ? 'pageviews' : 'visitors'],
        dimension: pages ? 'page' : dimension === 'country' ? 'country' : null,
        filters: [],
        range: '24h',
        compare_to: null,
        interval: null,
        limit: readLimit(q) ?? 10,
        result: pages || dimension === 'country' ? 'table' : 'number',
      },
      confidence: 0.9,
      said,
    };
  }

  const conversion = goal !== undefined || event !== undefined || dimension === 'goal' || dimension === 'event';
  if (!metric) {
    if (goal || event || dimension === 'goal' || dimension === 'event') metric = 'conversions';
    else if (dimension === 'page') metric = 'pageviews';
    else if (dimension || trend || compare || rangeHit || filters.length) metric = 'visitors';
  } else score += 0.2;
  if (!metric) return undefined;
  if (metric === 'events' && (goal || event || dimension === 'goal' || dimension === 'event')) metric = 'conversions';
  // "visitors who signed up", "visitors signed up": the goal's conversions.
  if (metric === 'visitors' && (goal || event)) metric = 'conversions';
  if (rangeHit) score += 0.15;
  if (dimension || filters.length) score += 0.1;

  const revenue = metric === 'revenue';
  const intent: QueryPlan['intent'] = trend
    ? 'trend'
    : dimension
      ? 'breakdown'
      : compare
        ? 'comparison'
        : revenue
          ? 'revenue'
          : conversion || metric === 'conversions' || metric === 'conversion_rate'
            ? 'conversions'
            : 'total';
  const range = rangeHit?.range ?? '7d';
  const chosenInterval =
    interval ??
    (trend
      ? range === '24h' || range === 'today' || range === 'yesterday'
        ? 'hour'
        : range === '1y'
          ? 'month'
          : 'day'
      : null);
  const limit = readLimit(q) ?? 10;
  const listOnly = dimension !== null && /\blist\b|\bnames?\b/.test(q);
  return {
    plan: {
      intent,
      metrics: [metric],
      dimension: trend ? null : dimension,
      filters,
      range,
      compare_to: trend ? null : compare,
      interval: trend ? chosenInterval : null,
      limit,
      result: trend ? 'timeseries' : dimension ? (listOnly ? 'list' : 'table') : 'number',
    },
    confidence: Math.min(0.95, Math.round(score * 100) / 100),
    said,
  };
}
