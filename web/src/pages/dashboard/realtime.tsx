// Placeholder until this section is built.
import type { SectionProps } from './section';

export default function Section({ site }: SectionProps) {
  return <p>realtime of {site.name}: not built yet</p>;
}
