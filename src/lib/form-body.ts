/** True for a form's body (urlencoded or multipart), the only bodies the web reader's POSTs take. */
export const isFormBody = (contentType: string | undefined) => /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(contentType ?? "");
