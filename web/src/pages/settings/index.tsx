// Placeholder until this page is built.
import { Shell } from '../../ui/layout';

export default function Page() {
  return <Shell title="index">Not built yet</Shell>;
}
