/**
 * The few fixed sentences the service says itself, by language: one table for the session engine and every channel,
 * so they live here once. A language without its own table falls back to English sentence by sentence, so adding a
 * language never leaves a gap.
 */

import { primaryLanguage } from '../text/language.ts';

export type PhraseKey =
  | 'dont_know'
  | 'filler'
  | 'handoff_human'
  | 'handoff_forward'
  | 'team_unavailable'
  | 'not_heard'
  | 'handoff_waiting'
  | 'handoff_waiting_closed'
  | 'handoff_waiting_until'
  | 'team_unavailable_until'
  | 'handback_timeout'
  | 'unknown_number'
  | 'goodbye'
  | 'busy'
  | 'text_only'
  | 'page_in_language'
  | 'agent_joined'
  | 'agent_handed_back'
  | 'agent_closed'
  | 'survey_question'
  | 'survey_good'
  | 'survey_ok'
  | 'survey_bad'
  | 'survey_thanks'
  | 'email_reply_subject'
  | 'email_reply_intro'
  | 'email_reply_link';

export const FALLBACK_PHRASE_LANGUAGE = 'en';

/** Sentences by two-letter language code; `en` is complete and is the fallback for every key. */
export const phrases = {
  en: {
    /** Nothing in the knowledge base fits: be honest and offer the team. */
    dont_know: "I don't know that, shall I connect you with the team?",
    /** Phone: spoken while the answer is not ready yet (a preemptible text frame). */
    filler: "One moment, I'm checking that.",
    /** A person takes over now. */
    handoff_human: "I'll connect you with a colleague.",
    /** protocol §2.2 handoff 'forward': the team follows up. */
    handoff_forward: 'The team will follow up with you.',
    /** protocol §2.2 handoff 'human' on the phone while the team is not available. */
    team_unavailable: 'The team is not available right now; they will follow up with you.',
    /** Phone: the prompt was empty or unintelligible. */
    not_heard: "Sorry, I didn't catch that. Could you say it again?",
    /** WhatsApp and web chat: a person was asked for; the conversation waits in the team's inbox. */
    handoff_waiting: 'A colleague will reply to you here.',
    /** The same outside the team's hours (or with the team switched off). */
    handoff_waiting_closed: 'The team is not available right now; they will reply to you here when they are back.',
    /** The same outside the team hours, which open again at {when} (a time today, or a weekday and time). */
    handoff_waiting_until: 'The team is away until {when}; they will reply to you here then.',
    /** team_unavailable outside the team hours, which open again at {when}. */
    team_unavailable_until: 'The team is away until {when}; they will follow up with you.',
    /** A waiting conversation nobody took went back to the bot (handback_after_minutes). */
    handback_timeout: "No colleague is free right now, so I'll help you further here.",
    /** Phone: the called number belongs to no workspace. */
    unknown_number: 'Sorry, this number cannot take calls right now. Goodbye.',
    /** Phone: after a handoff that ends the call without a person (docs/phone.md, TwiML action). */
    goodbye: 'Thank you for calling. Goodbye.',
    /** Phone: the engine is at its bound and takes no new call now (docs/operations.md, "Overload"). */
    busy: 'Sorry, we are very busy right now and cannot take your call. Please call again in a few minutes. Goodbye.',
    /** WhatsApp: the answer to a message we cannot read (docs/whatsapp.md, "Messages that are not text"). */
    text_only: 'I can only read text messages. Could you type your question?',
    /** The embedded answerer quotes a page in another language than the customer's; {language} is its name. */
    page_in_language: 'This page is in {language}:',
    /** A person took the conversation over (web chat, WhatsApp); {name} is theirs. */
    agent_joined: '{name} joined the conversation.',
    /** The person gave the conversation back to the bot. */
    agent_handed_back: "{name} handed the conversation back to me; I'll help you further here.",
    /** The person closed the conversation. */
    agent_closed: '{name} closed the conversation. Thank you for chatting with us!',
    /** The one satisfaction question after a close (WhatsApp's reply buttons; the widget has its own words). */
    survey_question: 'How did we do?',
    /** The reply buttons (WhatsApp allows 20 characters each). */
    survey_good: 'Good',
    survey_ok: 'OK',
    survey_bad: 'Bad',
    /** After an answer. */
    survey_thanks: 'Thank you for your feedback!',
    /** The email of a reply to a web chat visitor who left (src/channels/webchat/visitor-side.ts); {from} is who wrote it. */
    email_reply_subject: 'a reply to your chat',
    email_reply_intro: '{from} replied to your chat:',
    email_reply_link: 'Continue the chat on',
  },
  nl: {
    dont_know: 'Dat weet ik niet, zal ik u doorverbinden met het team?',
    filler: 'Een moment, ik zoek het even voor u op.',
    handoff_human: 'Ik verbind u door met een collega.',
    handoff_forward: 'Het team neemt contact met u op.',
    team_unavailable: 'Het team is nu niet bereikbaar; zij nemen later contact met u op.',
    not_heard: 'Sorry, dat verstond ik niet. Wilt u het nog eens zeggen?',
    handoff_waiting: 'Een collega antwoordt u hier.',
    handoff_waiting_closed: 'Het team is nu niet bereikbaar; zij antwoorden u hier zodra ze terug zijn.',
    handoff_waiting_until: 'Het team is afwezig tot {when}; zij antwoorden u dan hier.',
    team_unavailable_until: 'Het team is afwezig tot {when}; zij nemen dan contact met u op.',
    handback_timeout: 'Er is nu geen collega vrij, dus ik help u hier verder.',
    unknown_number: 'Sorry, dit nummer kan op dit moment geen gesprekken aannemen. Tot ziens.',
    goodbye: 'Bedankt voor uw telefoontje. Tot ziens.',
    busy: 'Sorry, het is op dit moment erg druk en we kunnen uw gesprek niet aannemen. Belt u over een paar minuten nog eens? Tot ziens.',
    text_only: 'Ik kan alleen tekstberichten lezen. Kunt u uw vraag typen?',
    page_in_language: 'Deze pagina is in het {language}:',
    agent_joined: '{name} neemt het gesprek over.',
    agent_handed_back: '{name} heeft het gesprek aan mij teruggegeven; ik help u hier verder.',
    agent_closed: '{name} heeft het gesprek afgesloten. Bedankt voor uw bericht!',
    survey_question: 'Hoe hebben we het gedaan?',
    survey_good: 'Goed',
    survey_ok: 'Redelijk',
    survey_bad: 'Slecht',
    survey_thanks: 'Bedankt voor uw reactie!',
    email_reply_subject: 'een antwoord op uw chat',
    email_reply_intro: '{from} heeft op uw chat geantwoord:',
    email_reply_link: 'Verder chatten op',
  },
  de: {
    dont_know: 'Das weiß ich leider nicht. Soll ich Sie mit dem Team verbinden?',
    filler: 'Einen Moment, ich sehe kurz für Sie nach.',
    handoff_human: 'Ich verbinde Sie mit einem Kollegen.',
    handoff_forward: 'Das Team meldet sich bei Ihnen.',
    team_unavailable: 'Das Team ist gerade nicht erreichbar; es meldet sich später bei Ihnen.',
    not_heard: 'Entschuldigung, das habe ich nicht verstanden. Könnten Sie es noch einmal sagen?',
    handoff_waiting: 'Ein Kollege antwortet Ihnen hier.',
    handoff_waiting_closed: 'Das Team ist gerade nicht erreichbar; es antwortet Ihnen hier, sobald es zurück ist.',
    handoff_waiting_until: 'Das Team ist bis {when} nicht erreichbar; es antwortet Ihnen dann hier.',
    team_unavailable_until: 'Das Team ist bis {when} nicht erreichbar; es meldet sich dann bei Ihnen.',
    handback_timeout: 'Gerade ist kein Kollege frei, deshalb helfe ich Ihnen hier weiter.',
    unknown_number: 'Entschuldigung, diese Nummer kann gerade keine Anrufe annehmen. Auf Wiederhören.',
    goodbye: 'Vielen Dank für Ihren Anruf. Auf Wiederhören.',
    busy: 'Entschuldigung, wir sind gerade sehr beschäftigt und können Ihren Anruf nicht annehmen. Bitte rufen Sie in ein paar Minuten noch einmal an. Auf Wiederhören.',
    text_only: 'Ich kann nur Textnachrichten lesen. Könnten Sie Ihre Frage bitte eintippen?',
    page_in_language: 'Diese Seite ist auf {language}:',
    agent_joined: '{name} ist dem Gespräch beigetreten.',
    agent_handed_back: '{name} hat das Gespräch an mich zurückgegeben; ich helfe Ihnen hier weiter.',
    agent_closed: '{name} hat das Gespräch beendet. Vielen Dank für Ihre Nachricht!',
    survey_question: 'Wie zufrieden waren Sie?',
    survey_good: 'Gut',
    survey_ok: 'Okay',
    survey_bad: 'Schlecht',
    survey_thanks: 'Vielen Dank für Ihre Rückmeldung!',
    email_reply_subject: 'eine Antwort auf Ihren Chat',
    email_reply_intro: '{from} hat auf Ihren Chat geantwortet:',
    email_reply_link: 'Den Chat fortsetzen auf',
  },
  fr: {
    dont_know: "Je ne sais pas. Voulez-vous que je vous mette en relation avec l'équipe ?",
    team_unavailable: "L'équipe n'est pas disponible pour le moment ; elle reviendra vers vous.",
    handoff_waiting: 'Un collègue vous répondra ici.',
    handoff_waiting_closed: "L'équipe n'est pas disponible pour le moment ; elle vous répondra ici à son retour.",
    handoff_waiting_until: "L'équipe est absente jusqu'à {when} ; elle vous répondra ici à son retour.",
    team_unavailable_until: "L'équipe est absente jusqu'à {when} ; elle reviendra vers vous.",
    text_only: 'Je ne peux lire que les messages texte. Pourriez-vous écrire votre question ?',
    page_in_language: 'Cette page est en {language} :',
    agent_joined: '{name} a rejoint la conversation.',
    agent_handed_back: "{name} m'a rendu la conversation ; je continue à vous aider ici.",
    agent_closed: '{name} a clôturé la conversation. Merci de nous avoir écrit !',
    survey_question: "Comment s'est passé cet échange ?",
    survey_good: 'Bien',
    survey_ok: 'Moyen',
    survey_bad: 'Mauvais',
    survey_thanks: 'Merci pour votre avis !',
    email_reply_subject: 'une réponse à votre conversation',
    email_reply_intro: '{from} a répondu à votre conversation :',
    email_reply_link: 'Poursuivre la conversation sur',
  },
  es: {
    text_only: 'Solo puedo leer mensajes de texto. ¿Podría escribir su pregunta?',
  },
} as const satisfies { en: Record<PhraseKey, string> } & Record<string, Partial<Record<PhraseKey, string>>>;


/** The sentence `key` in `language`, or in English when that language has none. */
export function phrase(key: PhraseKey, language: string): string {
  const table = (phrases as Record<string, Partial<Record<PhraseKey, string>> | undefined>)[primaryLanguage(language)];
  return table?.[key] ?? phrases.en[key];
}

/** Monday 1 January 2024, noon UTC: the weekdays' names are read from the week that follows it. */
const A_MONDAY = Date.UTC(2024, 0, 1, 12);
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/**
 * The sentence `key` (handoff_waiting_until, team_unavailable_until) with {when}: the time the team hours open again,
 * today as "09:00", another day as "Monday 09:00" with the weekday in the customer's language.
 */
export function awayUntilPhrase(key: 'handoff_waiting_until' | 'team_unavailable_until', language: string, opening: { day: string; time: string; today: boolean }): string {
  let when = opening.time;
  if (!opening.today) {
    const index = Math.max(0, WEEKDAYS.indexOf(opening.day));
    let weekday: string;
    try {
      weekday = new Intl.DateTimeFormat(primaryLanguage(language) || FALLBACK_PHRASE_LANGUAGE, { weekday: 'long', timeZone: 'UTC' }).format(A_MONDAY + index * 86_400_000);
    } catch {
      weekday = new Intl.DateTimeFormat(FALLBACK_PHRASE_LANGUAGE, { weekday: 'long', timeZone: 'UTC' }).format(A_MONDAY + index * 86_400_000);
    }
    when = `${weekday} ${opening.time}`;
  }
  return phrase(key, language).replace('{when}', when);
}

const segmenters = new Map<string, Intl.Segmenter>();

/**
 * A sentence segmenter for the language (Intl's rules know abbreviations like "bijv." and "e.g."), cached because
 * creating one costs more than segmenting a reply. Keyed by the primary subtag, so the cache stays small.
 */
export function sentenceSegmenter(language: string): Intl.Segmenter {
  const key = primaryLanguage(language);
  let segmenter = segmenters.get(key);
  if (segmenter === undefined) {
    try {
      segmenter = new Intl.Segmenter(key === '' ? FALLBACK_PHRASE_LANGUAGE : key, { granularity: 'sentence' });
    } catch {
      segmenter = new Intl.Segmenter(FALLBACK_PHRASE_LANGUAGE, { granularity: 'sentence' });
    }
    // Language codes come from callers; a flood of odd ones must not grow the cache without bound.
    if (segmenters.size >= 64) segmenters.clear();
    segmenters.set(key, segmenter);
  }
  return segmenter;
}
