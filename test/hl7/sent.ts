// What the decoder may have read from the bytes on the wire: with `charset: auto` a message that is valid UTF-8 is
// read as UTF-8, any other as Latin-1. A part of a result was sent if one of the two readings holds it. The UTF-8
// reading of the whole stream holds each message's own strict reading, because the framing bytes are ASCII.
import { expect } from 'vitest';

export function wireReadings(wire: Buffer): string[] {
  return [wire.toString('latin1'), wire.toString('utf8')];
}

export function expectSent(readings: string[], part: string): void {
  expect(
    readings.some((text) => text.includes(part)),
    `${JSON.stringify(part)} is in neither the Latin-1 nor the UTF-8 reading of the bytes`,
  ).toBe(true);
}
