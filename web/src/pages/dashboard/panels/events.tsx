// Placeholder until this panel is built.
import type { SectionProps } from '../section';

export default function Panel(_props: SectionProps) {
  return null;
}
