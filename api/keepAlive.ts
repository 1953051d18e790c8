// Idle keep-alive connections outlive the clients' and proxies' own idle timeouts (load balancers commonly
// keep 60 s): a server that closes first races a client reusing the socket, which then sees ECONNRESET on a
// request it had already sent.
import type { Server } from 'node:http';

const KEEP_ALIVE_MS = 65_000;

export function keepConnectionsAlive(server: Server): Server {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // Must exceed keepAliveTimeout, or a slow request's headers on a reused socket time out first.
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  return server;
}
