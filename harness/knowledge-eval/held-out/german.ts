/**
 * HELD OUT. A German set for the knowledge evaluation (issue 36, step 3; docs/performance.md, "Knowledge answers"):
 * Optik Sommer, an optician in Freiburg with an online shop for contact lenses and sunglasses, nine pages in German,
 * and the questions its customers ask, written the way they write (other words than the page, du and Sie, compounds
 * such as Lieferzeit and Rücksendung, umlauts typed as ae/oe/ue or left out, greetings and places, fragments), plus
 * questions near a page's topic whose fact no page holds: those must get "I don't know" (in German).
 *
 * Written on 2026-11-28 by a helper session of issue 36, before any change to the search's rules, without reading the
 * search's word lists (thesaurus, query, vocabulary, words) or the tuning set's questions (../shop.ts).
 * Held out: it must never be used to tune the search. Never add a question's words to the search's lists or to these
 * pages to make it pass; a miss here is a figure, not a bug report against this file.
 * Changing a question after a search change voids the figure.
 */
import { pageBuilder, question as q, type EvalSet } from '../eval-set.ts';

const page = pageBuilder('https://optik-sommer.example');

export const germanPages = [
  page('de/sehtest', 'de', 'Sehtest', [
    'Unser Sehtest ist kostenlos und dauert etwa 20 Minuten. Bitte vereinbaren Sie dafür einen Termin, online oder telefonisch unter 0761 456 78 90.',
    'Der Sehtest ersetzt keine augenärztliche Untersuchung. Für Führerscheinbewerber bieten wir den amtlich anerkannten Sehtest für 6,43 € an; die Bescheinigung erhalten Sie sofort.',
  ]),
  page('de/brillen', 'de', 'Brillen und Gläser', [
    'Eine Einstärkenbrille mit entspiegelten Kunststoffgläsern bekommen Sie bei uns ab 99 €, Fassung inklusive. Gleitsichtbrillen gibt es ab 389 €.',
    'Wir führen Fassungen von Ray-Ban, Lindberg, Silhouette und Tom Ford sowie unsere eigene Marke. Ihre neue Brille ist in der Regel nach 5 bis 7 Werktagen abholbereit; Gleitsichtgläser brauchen bis zu 10 Werktage.',
    'Sonnenbrillen mit Ihrer Sehstärke fertigen wir ab 159 € an.',
  ]),
  page('de/kontaktlinsen', 'de', 'Kontaktlinsen', [
    'Die Anpassung von Kontaktlinsen kostet 49 € und umfasst die Vermessung Ihrer Hornhaut, Probelinsen und zwei Nachkontrollen. Schließen Sie danach ein Linsen-Abo ab, wird die Anpassung angerechnet.',
    'Im Linsen-Abo bekommen Sie Monatslinsen und Pflegemittel alle drei Monate nach Hause geschickt, ab 17,90 € im Monat. Das Abo ist monatlich kündbar.',
  ]),
  page('de/oeffnungszeiten', 'de', 'Öffnungszeiten und Anfahrt', [
    'Sie finden uns in der Kaiser-Joseph-Straße 188, 79098 Freiburg im Breisgau, gegenüber dem Martinstor. Die Straßenbahnhaltestelle Bertoldsbrunnen ist 200 Meter entfernt.',
    'Geöffnet haben wir Montag bis Freitag von 9:30 bis 18:30 Uhr und samstags von 9:30 bis 16:00 Uhr. Sonn- und feiertags ist geschlossen.',
  ]),
  page('de/garantie', 'de', 'Garantie und Reparatur', [
    'Auf alle Fassungen geben wir 2 Jahre Garantie auf Material- und Verarbeitungsfehler. Für entspiegelte Gläser gilt eine Garantie von 3 Jahren gegen das Ablösen der Beschichtung.',
    'Kleine Reparaturen wie das Nachziehen von Schrauben, neue Nasenpads oder das Ausrichten der Brille machen wir gratis, auch wenn Sie die Brille nicht bei uns gekauft haben. Ist ein Bügel gebrochen, bestellen wir ein Ersatzteil beim Hersteller; das dauert etwa zwei Wochen.',
    'Gegen Bruch und Verlust können Sie Ihre Brille beim Kauf für 29 € im Jahr versichern.',
  ]),
  page('de/krankenkasse', 'de', 'Krankenkasse und Zuschuss', [
    'Die gesetzlichen Krankenkassen zahlen einen Zuschuss zu Brillengläsern nur für Kinder und Jugendliche bis 18 Jahre sowie für Erwachsene mit einer Sehschwäche ab 6 Dioptrien oder einer Hornhautverkrümmung ab 4 Dioptrien. Dafür brauchen Sie eine Verordnung vom Augenarzt.',
    'Mit der Verordnung rechnen wir den Zuschuss direkt mit Ihrer Kasse ab. Privat Versicherte bekommen von uns eine Rechnung zum Einreichen.',
  ]),
  page('de/versand', 'de', 'Versand', [
    'Bestellungen aus unserem Onlineshop verschicken wir mit DHL. Was Sie werktags bis 14 Uhr bestellen, geht noch am selben Tag raus; die Lieferung innerhalb Deutschlands dauert 1 bis 3 Werktage.',
    'Der Versand kostet innerhalb Deutschlands 4,90 €, ab einem Bestellwert von 50 € ist er kostenlos. Nach Österreich und in die Schweiz liefern wir für 9,90 €.',
  ]),
  page('de/rueckgabe', 'de', 'Rückgabe und Widerruf', [
    'Sie können Artikel aus dem Onlineshop innerhalb von 30 Tagen nach Erhalt zurückschicken; das gesetzliche Widerrufsrecht von 14 Tagen verlängern wir damit freiwillig. Kontaktlinsen nehmen wir nur in ungeöffneten Blistern zurück.',
    'Brillen mit Gläsern in Ihrer Sehstärke sind für Sie angefertigt und vom Umtausch ausgeschlossen. Den Kaufpreis erstatten wir innerhalb von 10 Tagen nach Eingang der Rücksendung; das Rücksendeetikett ist kostenlos.',
  ]),
  page('de/bezahlen', 'de', 'Bezahlen und Finanzierung', [
    'Im Geschäft zahlen Sie bar, mit girocard oder Kreditkarte. Im Onlineshop bieten wir PayPal, Kreditkarte, Sofortüberweisung und Kauf auf Rechnung an.',
    'Brillen ab 300 € können Sie in bis zu 10 Monatsraten ohne Zinsen bezahlen (0 % Finanzierung über unsere Partnerbank).',
  ]),
];

export const germanQuestions = [
  // Answerable.
  q('de', 'de/sehtest', 'Was kostet ein Sehtest bei euch?', 'Sehtest ist kostenlos'),
  q('de', 'de/sehtest', 'wie lange dauert der augentest', '20 Minuten'),
  q('de', 'de/sehtest', 'Brauche ich fuer den Sehtest einen Termin?', 'einen Termin'),
  q('de', 'de/sehtest', 'Ich mache gerade meinen Fuehrerschein, bietet ihr den Sehtest dafuer an?', '6,43 €'),
  q('de', 'de/sehtest', 'Hallo, ich bin Lena. Unter welcher Nummer kann ich einen Termin ausmachen?', '0761 456 78 90'),
  q('de', 'de/brillen', 'was kostet bei euch eine einfache brille?', '99 €'),
  q('de', 'de/brillen', 'Preis Gleitsichtbrille?', '389 €'),
  q('de', 'de/brillen', 'habt ihr Ray Ban Gestelle', 'Ray-Ban'),
  q('de', 'de/brillen', 'wie lange dauert es bis meine neue brille fertig ist', '5 bis 7 Werktagen'),
  q('de', 'de/brillen', 'Kann ich bei Ihnen eine Sonnenbrille mit Staerke bekommen?', '159 €'),
  q('de', 'de/brillen', 'wann kann ich meine gleitsichtbrille abholen', '10 Werktage'),
  q('de', 'de/kontaktlinsen', 'Was kostet die Anpassung von Kontaktlinsen?', '49 €'),
  q('de', 'de/kontaktlinsen', 'ich moechte von brille auf linsen umsteigen, was kostet das', '49 €'),
  q('de', 'de/kontaktlinsen', 'Gibt es ein Abo fuer Monatslinsen?', '17,90 €'),
  q('de', 'de/kontaktlinsen', 'kann ich das linsenabo kuendigen?', 'monatlich kündbar'),
  q('de', 'de/oeffnungszeiten', 'Wo ist euer Laden?', 'Kaiser-Joseph-Straße 188'),
  q('de', 'de/oeffnungszeiten', 'oeffnungszeiten samstag?', '16:00'),
  q('de', 'de/oeffnungszeiten', 'Habt ihr sonntags offen?', 'feiertags ist geschlossen'),
  q('de', 'de/oeffnungszeiten', 'wie komme ich mit der strassenbahn zu euch', 'Bertoldsbrunnen'),
  q('de', 'de/oeffnungszeiten', 'Bis wann haben Sie unter der Woche auf?', '18:30'),
  q('de', 'de/garantie', 'Wie lange Garantie habe ich auf meine Brille?', '2 Jahre'),
  q('de', 'de/garantie', 'Die Entspiegelung loest sich ab, faellt das unter die Garantie?', '3 Jahren'),
  q('de', 'de/garantie', 'Meine Schraube ist locker, kostet das was?', 'Nachziehen von Schrauben'),
  q('de', 'de/garantie', 'Buegel abgebrochen, was nun?', 'Ersatzteil'),
  q('de', 'de/garantie', 'ich hab die brille nicht bei euch gekauft, richtet ihr sie trotzdem?', 'nicht bei uns gekauft'),
  q('de', 'de/garantie', 'Kann ich meine Brille gegen Verlust versichern?', '29 €'),
  q('de', 'de/krankenkasse', 'Zahlt die Krankenkasse meine Brille?', 'bis 18 Jahre', '6 Dioptrien'),
  q('de', 'de/krankenkasse', 'mein sohn ist 12 und braucht eine brille, gibt es was von der kasse dazu', 'bis 18 Jahre'),
  q('de', 'de/krankenkasse', 'rechnet ihr direkt mit der AOK ab?', 'direkt mit Ihrer Kasse ab'),
  q('de', 'de/krankenkasse', 'ich bin privat versichert, wie laeuft das?', 'Rechnung zum Einreichen'),
  q('de', 'de/versand', 'Lieferzeit?', '1 bis 3 Werktage'),
  q('de', 'de/versand', 'Wie hoch sind die Versandkosten?', '4,90 €'),
  q('de', 'de/versand', 'ab wann ist der versand gratis', '50 €'),
  q('de', 'de/versand', 'Liefert ihr auch nach Oesterreich? Gruesse aus Wien', '9,90 €'),
  q('de', 'de/versand', 'wenn ich heute mittag bestelle, wann wird es verschickt', 'selben Tag'),
  q('de', 'de/rueckgabe', 'Kann ich Kontaktlinsen zurueckgeben?', 'ungeöffneten Blistern'),
  q('de', 'de/rueckgabe', 'Ruecksendung, wie lange moeglich?', '30 Tagen'),
  q('de', 'de/rueckgabe', 'kann ich meine brille mit staerke umtauschen', 'vom Umtausch ausgeschlossen'),
  q('de', 'de/rueckgabe', 'wann bekomme ich nach der retoure mein geld zurueck', '10 Tagen'),
  q('de', 'de/bezahlen', 'Kann ich auf Rechnung bestellen?', 'Kauf auf Rechnung'),
  q('de', 'de/bezahlen', 'Kann ich die Brille in Raten abbezahlen?', '10 Monatsraten'),
  q('de', 'de/bezahlen', 'nehmt ihr EC-Karte?', 'girocard'),

  // Unanswerable: near a page's topic, but no page holds the fact.
  q('de', null, 'Was kostet bei euch ein Hoertest?'),
  q('de', null, 'Macht ihr auch Augenlasern?'),
  q('de', null, 'Gibt es Rabatt für Studenten?'),
  q('de', null, 'Habt ihr Parkplaetze vor dem Laden?'),
  q('de', null, 'Was kosten Tageslinsen?'),
  q('de', null, 'Kann ich bei Ihnen einen Gutschein kaufen?'),
  q('de', null, 'Ist Ihr Geschäft barrierefrei?'),
  q('de', null, 'Wie viel kostet eine Bildschirmarbeitsplatzbrille?'),
  q('de', null, 'Liefert ihr auch nach Italien?'),
  q('de', null, 'Habt ihr eine Filiale in Stuttgart?'),
];

export const germanSet: EvalSet = {
  name: 'german',
  title: 'German (an optician)',
  heldOut: true,
  pages: germanPages,
  questions: germanQuestions,
};
