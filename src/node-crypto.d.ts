/**
 * The one part of `node:crypto` (workerd's native implementation, under the `nodejs_compat` flag) this Worker uses:
 * declared here rather than through @types/node, which would also declare Node's globals (Buffer, process) that a
 * Worker does not have.
 */
declare module "node:crypto" {
  interface Hash {
    update(data: string): Hash;
    digest(encoding: "hex"): string;
  }
  export function createHash(algorithm: "sha1"): Hash;
}
