// An old import path, kept for modules outside lib/ingest that another change is moving (lib/stats): the
// job's types live in lib/ingest/job/rows.ts. Remove once nothing imports this file.
export { paymentRecordSchema } from './job/rows';
