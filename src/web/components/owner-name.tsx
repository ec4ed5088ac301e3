import { Author } from "./layout";

/** A story's owner: the author's name and kind, unless the account is gone. */
export const OwnerName = ({ id, name, type }: { id: string; name: string; type: string }) =>
  name ? <Author id={id} name={name} type={type} /> : <>a {type}</>;
