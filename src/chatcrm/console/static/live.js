// Live updates from the events feed (contract H). Not built yet; returns how to stop.
export function follow(ctx) {
  return () => {};
}
