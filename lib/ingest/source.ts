// An old import path, kept for modules outside lib/ingest that another change is moving (lib/stats): traffic
// sources live in lib/ingest/accept/source.ts. Remove once nothing imports this file.
export { DIRECT } from './accept/source';
