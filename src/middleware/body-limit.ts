import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../lib/errors";

const MAX_BODY_BYTES = 1024 * 1024;

/** Request bodies over 1 MiB are refused with 413 PAYLOAD_TOO_LARGE before they are read (the API and the forms). */
export const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new ApiError("PAYLOAD_TOO_LARGE", "Request body is larger than 1 MiB");
  },
});
