import { describe, expect, it } from 'vitest';
import { RedactionList } from '../../src/sinks/redaction-list.js';

describe('the redaction list', () => {
  it('keeps the secret and the latest tokens, however many tokens months of refreshes bring', () => {
    const list = new RedactionList(16);
    for (let fetch = 0; fetch < 10_000; fetch++) {
      list.add('client-secret-1');
      list.add(`assertion-${fetch}`);
      list.add(`token-${fetch}`);
    }
    expect(list.size).toBe(16);
    expect(list.redact('secret client-secret-1, token token-9999, assertion assertion-9999, older token-9993')).toBe(
      'secret [redacted], token [redacted], assertion [redacted], older [redacted]',
    );
  });

  it('ignores an empty string (which would otherwise redact between every character)', () => {
    const list = new RedactionList();
    list.add('');
    expect(list.size).toBe(0);
    expect(list.redact('abc')).toBe('abc');
  });
});
