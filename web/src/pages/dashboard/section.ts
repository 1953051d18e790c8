// What every dashboard section (overview, realtime, heatmaps, replays, errors) and every overview panel is
// given: the website, the view state from the URL, and a way to change it.
import type { Website } from '../../lib/types';
import type { DashboardState, Filter } from './state';

export interface SectionProps {
  site: Website;
  state: DashboardState;
  setState(next: DashboardState): void;
  /** Adds a filter to the whole dashboard (clicking a row). */
  addFilter(filter: Filter): void;
  /** A shared (public) dashboard: aggregates only, no settings, annotations or visitor-level data. */
  shared?: boolean;
}
