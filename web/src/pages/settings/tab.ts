// What each settings tab is given.
import type { Website } from '../../lib/types';

export interface SettingsTabProps {
  site: Website;
  /** Re-reads the website after a change. */
  reload(): void;
}
