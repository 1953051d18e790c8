// Placeholder until this tab is built.
import type { SettingsTabProps } from './tab';

export default function Tab({ site }: SettingsTabProps) {
  return <p>members of {site.name}: not built yet</p>;
}
