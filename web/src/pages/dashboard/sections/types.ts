// The answers the realtime, heatmap, replay and error sections read, from the server's own zod schemas.
import type {
  ErrorGroup,
  ErrorGroupStatus,
  ErrorGroupsData,
  HeatmapClicksData,
  HeatmapPagesData,
  RealtimeData,
  ReplayEventsData,
  ReplaySessionsData,
} from '../../../../../lib/external/schemas';

export type {
  ErrorGroup,
  ErrorGroupStatus,
  ErrorGroupsData,
  HeatmapClicksData,
  HeatmapPagesData,
  RealtimeData,
  ReplayEventsData,
  ReplaySessionsData,
};

/** The External API's read paths for a website (the dashboard reads them with its JWT, DESIGN §5). */
export const external = (path: string) => `/api/external/v1${path}`;
