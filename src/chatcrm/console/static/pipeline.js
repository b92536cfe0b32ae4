// The pipeline view (contract H). Not built yet.
import { h } from "./dom.js";

export async function pipeline(ctx) {
  return h("p", {}, "The pipeline view is not built yet.");
}
