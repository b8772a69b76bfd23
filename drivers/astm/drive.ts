// Running a pure machine through its own consequences: each effect the runner performs may produce the next input (a
// commit's outcome), which is queued, never fed by a nested call, so a chunk holding thousands of complete messages
// keeps the stack flat. One loop for the receiver (link.ts) and the whole line (line.ts).

/** Runs `input` and every input its effects produce through `step`; returns the last state. `perform` is given the state the step left. */
export function driveMachine<S, I, E>(
  step: (state: S, input: I) => { state: S; effects: E[] },
  state: S,
  input: I,
  perform: (effect: E, after: S) => I | void,
): S {
  let s = state;
  const inputs: I[] = [input];
  for (let next = inputs.shift(); next !== undefined; next = inputs.shift()) {
    const r = step(s, next);
    s = r.state;
    for (const effect of r.effects) {
      const produced = perform(effect, s);
      if (produced !== undefined) inputs.push(produced);
    }
  }
  return s;
}
