/**
 * A conversation's name where it is listed or linked (src/text/conversation-label.ts): the customer's name, else email
 * or number, else the first words of their first message cut at a word near 40 characters, never an index.
 */
import { describe, expect, it } from 'vitest';
import { conversationLabel, firstWords, LABEL_WORDS_CHARS } from '../../src/text/conversation-label.ts';

const facts = { channel: 'webchat' as const, customer_name: null, customer_email: null, customer_phone: null, first_words: null };

describe('a conversation is named', () => {
  it('by the customer: their name, else their email, else their number', () => {
    expect(conversationLabel({ ...facts, customer_name: 'Sam Jansen', customer_email: 'sam@example.org', first_words: 'Hi' })).toBe('Sam Jansen');
    expect(conversationLabel({ ...facts, customer_name: '  ', customer_email: 'sam@example.org', customer_phone: '+31612345678' })).toBe('sam@example.org');
    expect(conversationLabel({ ...facts, channel: 'whatsapp', customer_phone: '+31612345678', first_words: 'Hoi' })).toBe('+31612345678');
  });

  it('else by the first words of the first message, whole when short', () => {
    expect(conversationLabel({ ...facts, first_words: '  Do you ship\nto Belgium? ' })).toBe('Do you ship to Belgium?');
  });

  it('cut at a word boundary near 40 characters, with "…" and no dangling punctuation', () => {
    const label = firstWords('My order 1001 arrived broken, the box was crushed and the shoes are scratched');
    expect(label).toBe('My order 1001 arrived broken, the box…');
    expect(Array.from(label).length).toBeLessThanOrEqual(LABEL_WORDS_CHARS + 1);
    // A cut that falls on a space keeps the whole last word.
    expect(firstWords(`${'a'.repeat(19)} ${'b'.repeat(20)} and more`)).toBe(`${'a'.repeat(19)} ${'b'.repeat(20)}…`);
    // A comma before the cut is not left hanging.
    expect(firstWords(`${'word '.repeat(5)}wordy, and the rest of it goes on`)).toBe(`${'word '.repeat(5)}wordy, and the…`);
  });

  it('one long word or a script without spaces is cut by characters, never splitting one', () => {
    expect(firstWords('x'.repeat(60))).toBe(`${'x'.repeat(40)}…`);
    const emoji = `${'👍🏽'.repeat(30)}`;
    const cut = firstWords(emoji);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut.slice(0, -1)).toBe('👍🏽'.repeat(20));
  });

  it('markup is words like any other: the label is text for whoever shows it', () => {
    expect(conversationLabel({ ...facts, first_words: '<img src=x onerror=alert(1)> hi' })).toBe('<img src=x onerror=alert(1)> hi');
  });

  it('with no customer details and no words yet, says what it is, never "Conversation 1"', () => {
    expect(conversationLabel({ ...facts, channel: 'phone' })).toBe('A call with no words yet');
    expect(conversationLabel({ ...facts, first_words: '   ' })).toBe('A website chat with no message yet');
  });
});
