import type { LookupAll } from "../src/index";

/** A resolver that must not be called: literals are checked without DNS. */
export const noDns: LookupAll = async (host) => {
  throw new Error(`unexpected lookup of ${host}`);
};

/** A resolver that answers every name with these addresses. */
export const resolvesTo =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
