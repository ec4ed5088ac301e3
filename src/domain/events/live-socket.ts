/**
 * What the Worker tells the branch's room about a live-stream upgrade it admitted (src/routes/live.ts), in a
 * header only the Worker sets; the room (src/durable/live.ts) reads it to bound and accept the socket.
 */
export interface SocketRequest {
  branchId: string;
  /** `?after=`, validated: replay the segments after it. */
  after: number | null;
  /** The branch's story is archived: `hello` says so and the socket is closed after it. */
  archived: boolean;
  /** The verified caller's account (`bot:<id>`, `human:<id>` …), null when anonymous. */
  account: string | null;
  /** The caller's kind for the log: anonymous, human, admin or bot. */
  actor: string;
  /** The client address as the per-address limits count it (src/lib/address.ts). */
  address: string;
  requestId: string;
  /** Log the socket's close (the Worker's `LOG_REQUESTS`). */
  log: boolean;
}

export const SOCKET_HEADER = "x-live-socket";
