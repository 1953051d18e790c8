import { Link } from '../lib/router';
import { Card } from '../ui/layout';

export default function NotFound() {
  return (
    <Card title="Page not found">
      <p>There is nothing at this address. It may have moved, or the link may be incomplete.</p>
      <p>
        <Link href="/sites">Go to your sites</Link>
      </p>
    </Card>
  );
}
