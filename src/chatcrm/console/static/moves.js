// Where a dropped card goes (docs/api.md 4.6): the server never renumbers positions, which
// may have gaps and repeats, and an explicit orderInCards wins over its automatic one. So
// the console picks a position between the card's new neighbours, and when there is no
// room it moves the following cards down, so that the order a person sees is the order
// the server answers on the next load.

// `orders`: the positions of the shown cards of the column the card is dropped in, in the
// order shown, without the dropped card; `index`: where it lands among them. Answers the
// dropped card's position and the cards to move down: `[{index, order}]`, the last first
// (so that no two of them share a position while they are saved one by one).
export function placement(orders, index) {
  const before = index > 0 ? orders[index - 1] : null;
  const after = index < orders.length ? orders[index] : null;
  if (after === null) return { order: before === null ? 0 : before + 1, shifts: [] };
  let order;
  if (before !== null) order = before + 1;
  else order = Math.max(0, after - 1);
  const shifts = [];
  let last = order;
  for (let i = index; i < orders.length && orders[i] <= last; i++) {
    last += 1;
    shifts.push({ index: i, order: last });
  }
  return { order, shifts: shifts.reverse() };
}
