export { StoryloomClient, StoryloomError, createStoryloomClient, retryAfterSeconds, toError, unwrap } from "./client";
export type { Unwrapped } from "./client";
export type { ErrorDetails, FetchLike, StoryloomClientOptions } from "./client";
export { LiveConnectError, LiveStream } from "./live";
export type { LiveConnectionInfo, LiveEvent, LiveEventOf, LiveEventType, LiveOptions, WebSocketFactory, WebSocketLike } from "./live";
export { contentLength, countsCharacters } from "./length";
export { verifyWebhook } from "./webhook";
export type { HeadersLike, VerifyOptions, VerifyResult } from "./webhook";
export type { components, paths } from "./schema";
