import { describe, expect, it } from 'vitest';
import { createSentenceStream } from '../../src/ai/sentence-stream.ts';

/** Pushes `text` in slices of `size` characters; answers the pieces and what is left. */
function split(text: string, size = 3) {
  const stream = createSentenceStream({ maxChars: 100_000 });
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(...stream.push(text.slice(i, i + size)));
  return { pieces, rest: stream.text.slice(stream.consumed) };
}

describe('a streamed reply is cut into speakable sentences', () => {
  it('a sentence is complete once the next word has begun', () => {
    expect(split('We are open from 9:00 to 17:00. On Saturday we open at 10. Anything else?')).toEqual({
      pieces: ['We are open from 9:00 to 17:00.', 'On Saturday we open at 10.'],
      rest: 'Anything else?',
    });
  });

  it('prices, times and addresses are not sentence ends (no white space after the dot)', () => {
    expect(split('It costs €12.50 at www.example.com today. Yes it does.', 1)).toEqual({
      pieces: ['It costs €12.50 at www.example.com today.'],
      rest: 'Yes it does.',
    });
  });

  it('a list stays whole up to its blank line, so it can be spoken as one sentence', () => {
    expect(split('Our options:\n- Standard. Takes 3 days.\n- Express. Next day.\n\nWhich one do you want? Tell me.')).toEqual({
      pieces: ['Our options:\n- Standard. Takes 3 days.\n- Express. Next day.', 'Which one do you want?'],
      rest: 'Tell me.',
    });
    // A numbered list right after a sentence: "1." is seen as a list start, not as a new sentence.
    expect(split('Call us.\n1. First step\n2. Second')).toEqual({ pieces: [], rest: 'Call us.\n1. First step\n2. Second' });
  });

  it('closing quotes stay with their sentence; a code fence is never cut', () => {
    expect(split('He said "yes." Then more. ```a. b``` after. Done here.')).toEqual({
      pieces: ['He said "yes."', 'Then more.', '```a. b``` after.'],
      rest: 'Done here.',
    });
  });

  it('the pieces and the rest together are the text (only white space between them is dropped)', () => {
    const text = 'One. Two!\n\nThree? Four… Five.';
    const { pieces, rest } = split(text, 2);
    expect([...pieces, rest].join(' ').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' '));
  });
});
