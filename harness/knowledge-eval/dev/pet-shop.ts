/**
 * Development set: tuned on; the held-out sets are the figure we report.
 *
 * A pet-supplies shop in Venlo, near the German border, with a grooming salon, a vet-nurse consultation hour and puppy
 * classes: eleven pages (opening hours, address and parking, delivery, returns, payment, loyalty card, grooming prices,
 * grooming appointments, the consultation hour, puppy classes, gift vouchers), each in English, Dutch and German.
 * Questions as customers write them: other words than the page, greetings, names, places and order numbers around
 * the question, thanks, typos, no capitals, capitals, compounds, umlauts typed as ae/oe/ue or dropped, numbers in
 * words, problems instead of questions ("my dog's nails are too long"), fragments, du and Sie. Each answerable question
 * names its page and the fact as the page writes it; the unanswerable ones sit close to a page and ask what it does
 * not say. The search helper tunes general mechanisms on this set; never tune by adding a question's words to a page.
 */
import { pageBuilder, question as q, type EvalSet } from '../eval-set.ts';

const page = pageBuilder('https://pootjes.example');

const pages = [
  // ── English ──
  page('en/opening-hours', 'en', 'Opening hours', [
    'Our shop is open on Monday from 13:00 to 18:00, from Tuesday to Thursday from 9:00 to 18:00, on Friday from 9:00 to 20:00 and on Saturday from 9:00 to 17:00.',
    'We are closed on Sundays and public holidays. The grooming salon works by appointment from Tuesday to Saturday between 8:30 and 16:00. Customer service answers the phone on weekdays from 9:00 to 17:00.',
  ]),
  page('en/address-and-parking', 'en', 'Address and parking', [
    'You find Pootjes at Kaldenkerkerweg 212, 5915 AG Venlo, five minutes from the A67 and from the German border at Kaldenkirchen. Bus line 8 from Venlo station stops 100 metres from the shop.',
    'There is free parking for 25 cars right in front of the shop, with two spaces for disabled drivers. The shop is wheelchair accessible, and dogs on a lead are welcome inside.',
  ]),
  page('en/delivery', 'en', 'Delivery', [
    'Orders placed on a weekday before 15:00 are delivered in the Netherlands the next working day by PostNL. Parcels to Germany go with DHL and arrive in two to three working days.',
    'Delivery costs €4.95 in the Netherlands and €6.95 to Germany. Orders from €49 are delivered free in the Netherlands; to Germany delivery is free from €79. In Venlo and Tegelen our own van delivers heavy bags of food on Wednesday and Saturday for €2.50.',
    'With click and collect you order online and pick up your order in the shop two hours later, free of charge.',
  ]),
  page('en/returns', 'en', 'Returns and refunds', [
    'You can return unopened products within 30 days in their original packaging, with the receipt or the order number. Bring them to the shop or send them back; you pay the return postage yourself unless the product is faulty.',
    'Has your pet turned up its nose at a new food? Opened bags of dry food and trays of wet food can be brought back within 14 days if at least half is left: you get a credit note for the full price, not your money back.',
    'We refund returned products within five working days to the payment method you used. Medicines and flea and worm treatments cannot be returned once opened.',
  ]),
  page('en/payment', 'en', 'Payment methods', [
    'In the shop you can pay by debit card (Maestro and V PAY), by credit card (Visa and Mastercard), contactless with Apple Pay or Google Pay, and in cash.',
    'In the webshop you pay with iDEAL, PayPal, Bancontact or credit card, or you pay afterwards with Klarna. Customers in Germany can also pay in advance by bank transfer; we ship as soon as the money has arrived.',
    'Grooming appointments and puppy classes are paid in the shop on the day itself.',
  ]),
  page('en/loyalty-card', 'en', 'Loyalty card', [
    'The Pootjes card is free: ask for it at the till or sign up in our app. For every euro you spend you save one point, and 100 points give you €5 discount on your next purchase.',
    "Points stay valid for two years. On your pet's birthday you receive a voucher for 10% discount, once you have registered its date of birth. Lost your card? We block it and give you a new one, and your points stay on your account.",
  ]),
  page('en/grooming', 'en', 'Grooming salon: prices', [
    'Our groomers wash, cut and trim dogs and cats. A bath and blow-dry costs €32 for small dogs up to 10 kg, €42 for medium dogs from 10 to 25 kg and €55 for large dogs over 25 kg.',
    'A full groom (bath, cut and nail trim) starts at €52 for small dogs and €74 for large dogs. Cats are groomed for €45. Clipping nails costs €8 and needs no appointment: walk in during opening hours.',
    'Matted coats take longer: dematting costs €12 per quarter of an hour extra. A flea bath costs €11 extra.',
  ]),
  page('en/grooming-appointments', 'en', 'Grooming: booking and cancelling', [
    'Book a grooming appointment on our booking page or by phone on 077 320 45 67. We call you when your pet is ready, usually after two to three hours.',
    'You can cancel or move an appointment free of charge up to 24 hours before. If you cancel later or do not turn up, we charge half the price. If you are more than 15 minutes late, we may have to give you a new appointment.',
    'Your dog must be vaccinated: bring the vaccination booklet on the first visit. Puppies younger than six months get a short first visit to get used to the salon for €19.',
  ]),
  page('en/vet-nurse', 'en', 'Vet-nurse consultation hour', [
    'Every Wednesday from 14:00 to 16:00 and every Saturday from 10:00 to 12:00 our veterinary nurse Femke holds a consultation hour in the shop. No appointment needed: just walk in with your pet.',
    'She gives advice on food and weight, fleas, ticks and worms, dental care and the care of puppies and older pets, and she weighs your pet on the pet scale. The consultation is free with the Pootjes card and costs €7.50 otherwise.',
    'The vet nurse does not diagnose illnesses or prescribe medicines; for that, or in an emergency, contact your own vet.',
  ]),
  page('en/puppy-classes', 'en', 'Puppy classes', [
    'Our puppy course has eight lessons of one hour on Sunday morning at 10:00, on the fenced field behind the shop, and costs €95. Puppies join when they are between 9 and 16 weeks old; bring the vaccination booklet to the first lesson.',
    'A group has at most six puppies with their owners, and the trainer speaks Dutch, German and English. Missed a lesson? You can make it up in the next group at no cost. After the puppy course you can go on with the junior course of ten lessons for €115.',
  ]),
  page('en/gift-vouchers', 'en', 'Gift vouchers', [
    'Pootjes gift vouchers are for sale from €10 to €150, in the shop or online; a voucher bought online arrives by email as a PDF to print.',
    'A voucher is valid for one year and can be spent in the shop, in the webshop, in the grooming salon and on puppy classes. It cannot be exchanged for cash; if you spend less than its value, the rest stays on the voucher.',
  ]),

  // ── Dutch ──
  page('nl/openingstijden', 'nl', 'Openingstijden', [
    'Onze winkel is open op maandag van 13:00 tot 18:00, van dinsdag tot en met donderdag van 9:00 tot 18:00, op vrijdag van 9:00 tot 20:00 en op zaterdag van 9:00 tot 17:00.',
    'Op zon- en feestdagen zijn we gesloten. De trimsalon werkt op afspraak, van dinsdag tot en met zaterdag tussen 8:30 en 16:00. De klantenservice is op werkdagen telefonisch bereikbaar van 9:00 tot 17:00.',
  ]),
  page('nl/route-en-parkeren', 'nl', 'Route en parkeren', [
    'Je vindt Pootjes aan de Kaldenkerkerweg 212, 5915 AG Venlo, vijf minuten van de A67 en van de Duitse grens bij Kaldenkirchen. Buslijn 8 vanaf station Venlo stopt op 100 meter van de winkel.',
    'Vlak voor de winkel kun je gratis parkeren: er is plaats voor 25 auto\'s, waarvan twee invalidenparkeerplaatsen. De winkel is rolstoeltoegankelijk en honden aan de lijn zijn binnen welkom.',
  ]),
  page('nl/bezorging', 'nl', 'Bezorging', [
    'Bestellingen die je op een werkdag vóór 15:00 plaatst, bezorgt PostNL in Nederland de volgende werkdag. Pakketten naar Duitsland gaan met DHL en zijn er binnen twee tot drie werkdagen.',
    'Bezorgen kost € 4,95 in Nederland en € 6,95 naar Duitsland. Bestellingen vanaf € 49 bezorgen we gratis in Nederland; naar Duitsland is de bezorging gratis vanaf € 79. In Venlo en Tegelen brengt onze eigen bus zware zakken voer op woensdag en zaterdag voor € 2,50.',
    'Met click & collect bestel je online en haal je je bestelling twee uur later gratis op in de winkel.',
  ]),
  page('nl/retourneren', 'nl', 'Retourneren en terugbetalen', [
    'Ongeopende producten kun je binnen 30 dagen retourneren in de originele verpakking, met de kassabon of het bestelnummer. Breng ze naar de winkel of stuur ze terug; de retourporto betaal je zelf, behalve als het product defect is.',
    'Lust je huisdier het nieuwe voer niet? Geopende zakken droogvoer en kuipjes natvoer mag je binnen 14 dagen terugbrengen als er nog minstens de helft in zit: je krijgt dan een tegoedbon voor het volle bedrag, geen geld terug.',
    'Geretourneerde producten betalen we binnen vijf werkdagen terug via de betaalmethode die je gebruikte. Medicijnen en vlooien- en wormmiddelen kun je na opening niet retourneren.',
  ]),
  page('nl/betalen', 'nl', 'Betaalmethoden', [
    'In de winkel kun je pinnen (Maestro en V PAY), betalen met een creditcard (Visa en Mastercard), contactloos met Apple Pay of Google Pay, en contant.',
    'In de webshop betaal je met iDEAL, PayPal, Bancontact of creditcard, of je betaalt achteraf met Klarna. Klanten in Duitsland kunnen ook vooraf per bankoverschrijving betalen; we versturen zodra het geld binnen is.',
    'Trimafspraken en puppylessen reken je op de dag zelf af in de winkel.',
  ]),
  page('nl/klantenpas', 'nl', 'Klantenpas', [
    'De Pootjespas is gratis: vraag hem aan bij de kassa of meld je aan in onze app. Voor elke euro die je besteedt spaar je één punt, en 100 punten geven € 5 korting op je volgende aankoop.',
    'Punten blijven twee jaar geldig. Op de verjaardag van je huisdier krijg je een bon voor 10% korting, als je zijn geboortedatum hebt doorgegeven. Pas kwijt? We blokkeren hem en je krijgt een nieuwe; je punten blijven op je account staan.',
  ]),
  page('nl/trimsalon', 'nl', 'Trimsalon: prijzen', [
    'Onze trimmers wassen, knippen en trimmen honden en katten. Wassen en föhnen kost € 32 voor kleine honden tot 10 kg, € 42 voor middelgrote honden van 10 tot 25 kg en € 55 voor grote honden boven 25 kg.',
    'Een complete trimbeurt (wassen, knippen en nagels) kost vanaf € 52 voor kleine honden en € 74 voor grote honden. Katten trimmen we voor € 45. Nagels knippen kost € 8 en kan zonder afspraak tijdens de openingstijden.',
    'Een vervilte vacht kost meer tijd: ontklitten kost € 12 per kwartier extra. Een vlooienbad kost € 11 extra.',
  ]),
  page('nl/trimsalon-afspraken', 'nl', 'Trimsalon: afspraak maken en afzeggen', [
    'Maak een afspraak voor de trimsalon via onze boekingspagina of bel 077 320 45 67. We bellen je als je huisdier klaar is, meestal na twee tot drie uur.',
    'Afzeggen of verzetten is gratis tot 24 uur van tevoren. Zeg je later af of kom je niet, dan rekenen we de helft van de prijs. Ben je meer dan 15 minuten te laat, dan moeten we je misschien een nieuwe afspraak geven.',
    'Je hond moet ingeënt zijn: neem bij het eerste bezoek het vaccinatieboekje mee. Puppy\'s jonger dan zes maanden krijgen een kort kennismakingsbezoek om aan de salon te wennen, voor € 19.',
  ]),
  page('nl/spreekuur', 'nl', 'Spreekuur dierenartsassistente', [
    'Elke woensdag van 14:00 tot 16:00 en elke zaterdag van 10:00 tot 12:00 houdt onze dierenartsassistente Femke spreekuur in de winkel. Je kunt zonder afspraak binnenlopen met je huisdier.',
    'Ze geeft advies over voeding en gewicht, vlooien, teken en wormen, gebitsverzorging en de verzorging van puppy\'s en oudere dieren, en ze weegt je dier op de dierenweegschaal. Het spreekuur is gratis met de Pootjespas en kost anders € 7,50.',
    'De assistente stelt geen diagnoses en schrijft geen medicijnen voor; daarvoor, of in een noodgeval, neem je contact op met je eigen dierenarts.',
  ]),
  page('nl/puppycursus', 'nl', 'Puppycursus', [
    'Onze puppycursus heeft acht lessen van een uur op zondagochtend om 10:00, op het omheinde veld achter de winkel, en kost € 95. Puppy\'s beginnen als ze tussen 9 en 16 weken oud zijn; neem het vaccinatieboekje mee naar de eerste les.',
    'Een groep heeft maximaal zes puppy\'s met hun baasjes, en de trainer spreekt Nederlands, Duits en Engels. Een les gemist? Die kun je gratis inhalen in de volgende groep. Na de puppycursus kun je door met de juniorcursus van tien lessen voor € 115.',
  ]),
  page('nl/cadeaubonnen', 'nl', 'Cadeaubonnen', [
    'Pootjes-cadeaubonnen zijn te koop van € 10 tot € 150, in de winkel of online; een online gekochte bon krijg je per e-mail als pdf om te printen.',
    'Een cadeaubon is één jaar geldig en kun je besteden in de winkel, in de webshop, in de trimsalon en voor de puppycursus. Je kunt hem niet inwisselen voor geld; besteed je minder dan de waarde, dan blijft de rest op de bon staan.',
  ]),

  // ── German ──
  page('de/oeffnungszeiten', 'de', 'Öffnungszeiten', [
    'Unser Geschäft ist am Montag von 13:00 bis 18:00 geöffnet, von Dienstag bis Donnerstag von 9:00 bis 18:00, am Freitag von 9:00 bis 20:00 und am Samstag von 9:00 bis 17:00.',
    'An Sonn- und Feiertagen ist geschlossen. Der Hundesalon arbeitet nach Termin, von Dienstag bis Samstag zwischen 8:30 und 16:00. Der Kundenservice ist werktags von 9:00 bis 17:00 telefonisch erreichbar.',
  ]),
  page('de/anfahrt', 'de', 'Anfahrt und Parken', [
    'Sie finden Pootjes am Kaldenkerkerweg 212, 5915 AG Venlo, fünf Minuten von der A67 und von der deutschen Grenze bei Kaldenkirchen. Die Buslinie 8 ab Bahnhof Venlo hält 100 Meter vom Geschäft entfernt.',
    'Direkt vor dem Geschäft gibt es kostenlose Parkplätze für 25 Autos, davon zwei Behindertenparkplätze. Das Geschäft ist barrierefrei, und Hunde an der Leine sind willkommen.',
  ]),
  page('de/lieferung', 'de', 'Lieferung und Versand', [
    'Bestellungen, die Sie werktags vor 15:00 aufgeben, liefert PostNL in den Niederlanden am nächsten Werktag. Pakete nach Deutschland verschicken wir mit DHL; sie kommen in zwei bis drei Werktagen an.',
    'Der Versand kostet 4,95 € in den Niederlanden und 6,95 € nach Deutschland. Bestellungen ab 49 € liefern wir in den Niederlanden kostenlos, nach Deutschland ist der Versand ab 79 € kostenlos. In Venlo und Tegelen bringt unser eigener Lieferwagen schwere Futtersäcke am Mittwoch und Samstag für 2,50 €.',
    'Mit Click & Collect bestellen Sie online und holen Ihre Bestellung zwei Stunden später kostenlos im Geschäft ab.',
  ]),
  page('de/ruecksendung', 'de', 'Rückgabe und Erstattung', [
    'Ungeöffnete Produkte können Sie innerhalb von 30 Tagen in der Originalverpackung zurückgeben, mit dem Kassenbon oder der Bestellnummer. Bringen Sie sie ins Geschäft oder schicken Sie sie zurück; das Porto für die Rücksendung zahlen Sie selbst, außer wenn das Produkt defekt ist.',
    'Ihr Tier mag das neue Futter nicht? Angebrochene Säcke Trockenfutter und Schalen Nassfutter können Sie innerhalb von 14 Tagen zurückbringen, wenn noch mindestens die Hälfte übrig ist: Sie erhalten dann einen Gutschein über den vollen Preis, kein Geld zurück.',
    'Zurückgegebene Produkte erstatten wir innerhalb von fünf Werktagen über die Zahlungsart, mit der Sie bezahlt haben. Medikamente sowie Floh- und Wurmmittel sind nach dem Öffnen von der Rückgabe ausgeschlossen.',
  ]),
  page('de/bezahlung', 'de', 'Zahlungsarten', [
    'Im Geschäft zahlen Sie mit Debitkarte (Maestro und V PAY, auch mit der deutschen Girocard), mit Kreditkarte (Visa und Mastercard), kontaktlos mit Apple Pay oder Google Pay und bar.',
    'Im Webshop bezahlen Sie mit iDEAL, PayPal, Bancontact oder Kreditkarte, oder Sie zahlen später mit Klarna. Kunden in Deutschland können auch per Vorkasse mit Banküberweisung bezahlen; wir versenden, sobald das Geld eingegangen ist.',
    'Termine im Hundesalon und Welpenkurse bezahlen Sie am selben Tag im Geschäft.',
  ]),
  page('de/kundenkarte', 'de', 'Kundenkarte', [
    'Die Pootjes-Karte ist kostenlos: Fragen Sie an der Kasse danach oder melden Sie sich in unserer App an. Für jeden ausgegebenen Euro sammeln Sie einen Punkt, und 100 Punkte bringen 5 € Rabatt auf Ihren nächsten Einkauf.',
    'Punkte sind zwei Jahre gültig. Zum Geburtstag Ihres Tieres erhalten Sie einen Gutschein über 10 % Rabatt, wenn Sie sein Geburtsdatum angegeben haben. Karte verloren? Wir sperren sie und Sie bekommen eine neue; Ihre Punkte bleiben auf Ihrem Konto.',
  ]),
  page('de/hundesalon', 'de', 'Hundesalon: Preise', [
    'Unsere Groomer waschen, schneiden und trimmen Hunde und Katzen. Baden und Föhnen kostet 32 € für kleine Hunde bis 10 kg, 42 € für mittelgroße Hunde von 10 bis 25 kg und 55 € für große Hunde über 25 kg.',
    'Eine komplette Fellpflege (Baden, Schneiden und Krallen) kostet ab 52 € für kleine Hunde und 74 € für große Hunde. Katzen pflegen wir für 45 €. Krallenschneiden kostet 8 € und geht ohne Termin während der Öffnungszeiten.',
    'Verfilztes Fell braucht mehr Zeit: Das Entfilzen kostet 12 € pro Viertelstunde extra. Ein Flohbad kostet 11 € extra.',
  ]),
  page('de/hundesalon-termine', 'de', 'Hundesalon: Termin buchen und absagen', [
    'Buchen Sie einen Termin im Hundesalon über unsere Buchungsseite oder telefonisch unter 077 320 45 67. Wir rufen Sie an, wenn Ihr Tier fertig ist, meistens nach zwei bis drei Stunden.',
    'Absagen oder Verschieben ist bis 24 Stunden vorher kostenlos. Sagen Sie später ab oder kommen Sie nicht, berechnen wir den halben Preis. Wenn Sie mehr als 15 Minuten zu spät kommen, müssen wir Ihnen eventuell einen neuen Termin geben.',
    'Ihr Hund muss geimpft sein: Bringen Sie beim ersten Besuch den Impfpass mit. Welpen unter sechs Monaten bekommen einen kurzen Schnupperbesuch, um den Salon kennenzulernen, für 19 €.',
  ]),
  page('de/sprechstunde', 'de', 'Sprechstunde der Tiermedizinischen Fachangestellten', [
    'Jeden Mittwoch von 14:00 bis 16:00 und jeden Samstag von 10:00 bis 12:00 hält unsere Tiermedizinische Fachangestellte Femke eine Sprechstunde im Geschäft. Sie können ohne Termin mit Ihrem Tier vorbeikommen.',
    'Sie berät zu Ernährung und Gewicht, Flöhen, Zecken und Würmern, Zahnpflege und der Pflege von Welpen und älteren Tieren, und sie wiegt Ihr Tier auf der Tierwaage. Die Beratung ist mit der Pootjes-Karte kostenlos und kostet sonst 7,50 €.',
    'Sie stellt keine Diagnosen und verschreibt keine Medikamente; dafür, oder im Notfall, wenden Sie sich an Ihre eigene Tierarztpraxis.',
  ]),
  page('de/welpenkurs', 'de', 'Welpenkurs', [
    'Unser Welpenkurs hat acht Übungsstunden zu je 60 Minuten am Sonntagmorgen um 10:00 auf der eingezäunten Wiese hinter dem Geschäft und kostet 95 €. Welpen steigen ein, wenn sie zwischen 9 und 16 Wochen alt sind; bringen Sie zur ersten Stunde den Impfpass mit.',
    'Eine Gruppe hat höchstens sechs Welpen mit ihren Haltern, und die Trainerin spricht Niederländisch, Deutsch und Englisch. Eine Stunde verpasst? Sie können sie kostenlos in der nächsten Gruppe nachholen. Nach dem Welpenkurs geht es weiter mit dem Junghundekurs von zehn Stunden für 115 €.',
  ]),
  page('de/gutscheine', 'de', 'Geschenkgutscheine', [
    'Pootjes-Geschenkgutscheine gibt es von 10 € bis 150 €, im Geschäft oder online; einen online gekauften Gutschein bekommen Sie per E-Mail als PDF zum Ausdrucken.',
    'Ein Gutschein ist ein Jahr gültig und kann im Geschäft, im Webshop, im Hundesalon und für den Welpenkurs eingelöst werden. Eine Barauszahlung ist nicht möglich; geben Sie weniger aus als den Wert, bleibt der Rest auf dem Gutschein.',
  ]),
];

const questions = [
  // ── English ──
  q('en', 'en/opening-hours', 'what time do you open on mondays', 'Monday from 13:00 to 18:00'),
  q('en', 'en/opening-hours', 'Hi! Are you open on Sunday?', 'closed on Sundays'),
  q('en', 'en/opening-hours', 'late night shopping friday?', 'Friday from 9:00 to 20:00'),
  q('en', 'en/opening-hours', 'WHAT ARE YOUR OPENING HOURS', 'Tuesday to Thursday from 9:00 to 18:00'),
  q('en', 'en/opening-hours', 'till what time can i phone customer service', 'weekdays from 9:00 to 17:00'),

  q('en', 'en/address-and-parking', 'where is your store located?', 'Kaldenkerkerweg 212'),
  q('en', 'en/address-and-parking', 'parking?', 'free parking for 25 cars'),
  q('en', 'en/address-and-parking', 'can i bring my dog into the shop', 'dogs on a lead are welcome'),
  q('en', 'en/address-and-parking', 'is there a bus from the train station', 'Bus line 8'),
  q('en', 'en/address-and-parking', "I'm in a wheelchair, can I get into the store?", 'wheelchair accessible'),

  q('en', 'en/delivery', 'how much is postage to germany', '€6.95'),
  q('en', 'en/delivery', 'Hello, I ordered this morning (order #48213), when will my order arrive in Eindhoven? Thanks, Sanne', 'the next working day'),
  q('en', 'en/delivery', 'from what amount is shipping free', 'from €49'),
  q('en', 'en/delivery', 'could you bring a twenty kilo sack of dog food to my house in tegelen', 'our own van'),
  q('en', 'en/delivery', 'can i order online and collect it at the shop', 'click and collect'),

  q('en', 'en/returns', "my dog doesn't like the new food, can i take back the opened bag?", 'at least half is left'),
  q('en', 'en/returns', 'how many days do I have to send something back', 'within 30 days'),
  q('en', 'en/returns', 'when do i get a refund', 'within five working days'),
  q('en', 'en/returns', 'can i return opened worming tablets', 'cannot be returned once opened'),
  q('en', 'en/returns', 'who pays the postage for a return?', 'return postage yourself'),

  q('en', 'en/payment', 'do you take credit cards in the store?', 'Visa and Mastercard'),
  q('en', 'en/payment', 'Can I pay with my phone', 'Apple Pay or Google Pay'),
  q('en', 'en/payment', 'what payment options do you accept online', 'iDEAL'),
  q('en', 'en/payment', 'is buy now pay later possible', 'Klarna'),
  q('en', 'en/payment', 'do I pay for the puppy class upfront or on the day?', 'paid in the shop on the day itself'),

  q('en', 'en/loyalty-card', 'how does the rewards card work', '100 points'),
  q('en', 'en/loyalty-card', 'do my points expire?', 'valid for two years'),
  q('en', 'en/loyalty-card', "i've lost my customer card, are my points gone?", 'your points stay'),
  q('en', 'en/loyalty-card', 'any birthday discount for my cat', '10% discount'),

  q('en', 'en/grooming', "my dog's nails are too long", 'Clipping nails costs €8'),
  q('en', 'en/grooming', 'how much to wash a big labrador', '€55'),
  q('en', 'en/grooming', 'what do you charge for grooming a cat', '€45'),
  q('en', 'en/grooming', 'my poodles fur is all matted and knotted', '€12 per quarter of an hour'),
  q('en', 'en/grooming', 'dog grooming price list pls', '€32'),

  q('en', 'en/grooming-appointments', 'I have to cancel my grooming appointment for tomorrow, will I be charged?', 'up to 24 hours before'),
  q('en', 'en/grooming-appointments', 'how can i book the dog groomer', 'booking page'),
  q('en', 'en/grooming-appointments', 'how long will the grooming take', 'two to three hours'),
  q('en', 'en/grooming-appointments', 'what happens if im late for my appointment', 'more than 15 minutes late'),

  q('en', 'en/vet-nurse', 'when is the vet nurse in?', 'Wednesday from 14:00 to 16:00'),
  q('en', 'en/vet-nurse', 'do i need to make an appointment to see the veterinary nurse', 'No appointment needed'),
  q('en', 'en/vet-nurse', "my cat's getting fat, can someone give me advice on her weight", 'advice on food and weight'),
  q('en', 'en/vet-nurse', 'can the nurse prescribe antibiotics for my dog', 'does not diagnose illnesses or prescribe medicines'),

  q('en', 'en/puppy-classes', 'how much are puppy training lessons?', '€95'),
  q('en', 'en/puppy-classes', 'how old must my puppy be to start the course', 'between 9 and 16 weeks old'),
  q('en', 'en/puppy-classes', 'what if we miss a class', 'make it up in the next group'),

  q('en', 'en/gift-vouchers', 'do you sell gift cards', '€10 to €150'),
  q('en', 'en/gift-vouchers', 'how long is a gift certificate valid', 'valid for one year'),
  q('en', 'en/gift-vouchers', 'can i use a voucher at the groomers? cheers, Tom', 'in the grooming salon'),

  q('en', null, 'do you sell puppies or kittens?'),
  q('en', null, 'can i pay with bitcoin'),
  q('en', null, 'do you have a self-service dog wash'),
  q('en', null, 'is there a charging point for electric cars in your car park'),
  q('en', null, 'do you deliver to belgium'),
  q('en', null, 'can the vet nurse microchip my kitten'),
  q('en', null, 'are the puppy classes held indoors when it rains'),
  q('en', null, 'can i share my loyalty points with my sister'),
  q('en', null, 'do you gift wrap vouchers'),
  q('en', null, 'how much is a cat scratching post'),

  // ── Dutch ──
  q('nl', 'nl/openingstijden', 'hoe laat gaan jullie open op maandag', 'maandag van 13:00 tot 18:00'),
  q('nl', 'nl/openingstijden', 'zijn jullie zondag open?', 'zon- en feestdagen zijn we gesloten'),
  q('nl', 'nl/openingstijden', 'koopavond?', 'vrijdag van 9:00 tot 20:00'),
  q('nl', 'nl/openingstijden', 'openingstyden winkel', 'dinsdag tot en met donderdag van 9:00 tot 18:00'),

  q('nl', 'nl/route-en-parkeren', 'waar zitten jullie precies', 'Kaldenkerkerweg 212'),
  q('nl', 'nl/route-en-parkeren', 'kan ik bij de winkel parkeren', 'gratis parkeren'),
  q('nl', 'nl/route-en-parkeren', 'mag mijn hond mee naar binnen', 'honden aan de lijn zijn binnen welkom'),
  q('nl', 'nl/route-en-parkeren', 'welke bus moet ik nemen vanaf het station', 'Buslijn 8'),

  q('nl', 'nl/bezorging', 'wat zijn de verzendkosten naar duitsland', '€ 6,95'),
  q('nl', 'nl/bezorging', 'Goedemorgen, ik heb vanochtend besteld (bestelnummer 48213). Wanneer wordt het bezorgd? Groetjes, Anouk', 'de volgende werkdag'),
  q('nl', 'nl/bezorging', 'vanaf welk bedrag is de verzending gratis', 'vanaf € 49'),
  q('nl', 'nl/bezorging', 'kunnen jullie een zak hondenbrokken van twintig kilo bij mij in tegelen thuisbrengen', 'eigen bus'),
  q('nl', 'nl/bezorging', 'kan ik online bestellen en in de winkel ophalen', 'click & collect'),

  q('nl', 'nl/retourneren', 'mijn kat lust het nieuwe voer niet, mag ik de open zak terugbrengen?', 'minstens de helft'),
  q('nl', 'nl/retourneren', 'hoeveel dagen heb ik om iets terug te sturen', 'binnen 30 dagen'),
  q('nl', 'nl/retourneren', 'wanneer krijg ik mijn geld terug', 'binnen vijf werkdagen'),
  q('nl', 'nl/retourneren', 'retourkosten?', 'retourporto betaal je zelf'),
  q('nl', 'nl/retourneren', 'kan ik een geopende ontwormingskuur terugbrengen', 'na opening niet retourneren'),

  q('nl', 'nl/betalen', 'kan ik in de winkel met mijn bankpas betalen', 'pinnen'),
  q('nl', 'nl/betalen', 'betalen met creditcard?', 'Visa en Mastercard'),
  q('nl', 'nl/betalen', 'kan ik met mijn telefoon afrekenen', 'Apple Pay of Google Pay'),
  q('nl', 'nl/betalen', 'is achterafbetalen mogelijk', 'Klarna'),
  q('nl', 'nl/betalen', 'hoe betaal ik de trimbeurt, vooraf of op de dag zelf?', 'op de dag zelf af'),

  q('nl', 'nl/klantenpas', 'hoe werkt de klantenkaart', '100 punten'),
  q('nl', 'nl/klantenpas', 'verlopen mijn spaarpunten', 'twee jaar geldig'),
  q('nl', 'nl/klantenpas', 'pasje kwijt, ben ik mijn punten nu kwijt?', 'je punten blijven'),
  q('nl', 'nl/klantenpas', 'krijgt mijn hond korting op zijn verjaardag', '10% korting'),

  q('nl', 'nl/trimsalon', 'de nagels van mijn hond zijn te lang', 'Nagels knippen kost € 8'),
  q('nl', 'nl/trimsalon', 'wat kost het wassen van een grote hond', '€ 55'),
  q('nl', 'nl/trimsalon', 'kat laten trimmen prijs', '€ 45'),
  q('nl', 'nl/trimsalon', 'de vacht van mijn hond zit vol klitten', '€ 12 per kwartier'),
  q('nl', 'nl/trimsalon', 'prijslijst trimmen kleine hond', '€ 32', '€ 52'),

  q('nl', 'nl/trimsalon-afspraken', 'ik moet mijn trimafspraak van morgen afzeggen, moet ik dan betalen?', 'tot 24 uur van tevoren'),
  q('nl', 'nl/trimsalon-afspraken', 'hoe maak ik een afspraak bij de hondentrimmer', 'boekingspagina'),
  q('nl', 'nl/trimsalon-afspraken', 'hoelang duurt een trimbeurt', 'twee tot drie uur'),
  q('nl', 'nl/trimsalon-afspraken', 'moet mijn hond gevaccineerd zijn voor het trimmen', 'ingeënt'),

  q('nl', 'nl/spreekuur', 'wanneer is de dierenassistente er', 'woensdag van 14:00 tot 16:00'),
  q('nl', 'nl/spreekuur', 'moet ik een afspraak maken voor het spreekuur', 'zonder afspraak binnenlopen'),
  q('nl', 'nl/spreekuur', 'mijn hond is te dik, kan iemand me advies geven?', 'voeding en gewicht'),
  q('nl', 'nl/spreekuur', 'wat kost het consult bij de assistente', '€ 7,50'),

  q('nl', 'nl/puppycursus', 'puppytraining kosten', '€ 95'),
  q('nl', 'nl/puppycursus', 'hoe oud moet mijn pup zijn om mee te doen', 'tussen 9 en 16 weken'),
  q('nl', 'nl/puppycursus', 'les gemist, wat nu', 'inhalen'),

  q('nl', 'nl/cadeaubonnen', 'hebben jullie cadeaukaarten', '€ 10 tot € 150'),
  q('nl', 'nl/cadeaubonnen', 'hoelang is een kadobon geldig', 'één jaar geldig'),
  q('nl', 'nl/cadeaubonnen', 'kan ik de bon ook bij de trimsalon gebruiken? bedankt!', 'in de trimsalon'),

  q('nl', null, 'verkopen jullie ook kittens'),
  q('nl', null, 'kan ik met bitcoin betalen'),
  q('nl', null, 'hebben jullie een zelfwasplaats voor honden'),
  q('nl', null, 'is er een laadpaal bij de winkel'),
  q('nl', null, 'bezorgen jullie ook in belgie'),
  q('nl', null, 'kan de assistente mijn kitten chippen'),
  q('nl', null, 'gaat de puppycursus door als het regent'),
  q('nl', null, 'kan ik mijn punten delen met mijn zus'),
  q('nl', null, 'pakken jullie cadeaubonnen in als cadeautje'),
  q('nl', null, 'wat kost een krabpaal'),

  // ── German ──
  q('de', 'de/oeffnungszeiten', 'Wann haben Sie montags geöffnet?', 'Montag von 13:00 bis 18:00'),
  q('de', 'de/oeffnungszeiten', 'habt ihr sonntags auf', 'Sonn- und Feiertagen ist geschlossen'),
  q('de', 'de/oeffnungszeiten', 'oeffnungszeiten freitag', 'Freitag von 9:00 bis 20:00'),
  q('de', 'de/oeffnungszeiten', 'GESCHAEFTSZEITEN?', 'Dienstag bis Donnerstag von 9:00 bis 18:00'),

  q('de', 'de/anfahrt', 'wo ist euer laden', 'Kaldenkerkerweg 212'),
  q('de', 'de/anfahrt', 'Kann man bei Ihnen parken?', 'kostenlose Parkplätze'),
  q('de', 'de/anfahrt', 'darf mein hund mit rein', 'Hunde an der Leine'),
  q('de', 'de/anfahrt', 'ich wohne in kaldenkirchen, wie weit ist es zu euch', 'fünf Minuten'),

  q('de', 'de/lieferung', 'was kostet der versand nach deutschland', '6,95 €'),
  q('de', 'de/lieferung', 'wie lange dauert die lieferung nach düsseldorf', 'zwei bis drei Werktagen'),
  q('de', 'de/lieferung', 'ab welchem betrag ist der versand nach deutschland gratis', 'ab 79 €'),
  q('de', 'de/lieferung', 'Guten Tag, ich habe Bestellung 48213 aufgegeben. Mit welchem Paketdienst kommt sie? Viele Grüße, Jürgen', 'DHL'),
  q('de', 'de/lieferung', 'kann ich online bestellen und im laden abholen', 'Click & Collect'),

  q('de', 'de/ruecksendung', 'mein hund mag das neue futter nicht, kann ich den angebrochenen sack zurueckgeben', 'mindestens die Hälfte'),
  q('de', 'de/ruecksendung', 'rueckgabefrist', 'innerhalb von 30 Tagen'),
  q('de', 'de/ruecksendung', 'wann bekomme ich mein geld zurück', 'innerhalb von fünf Werktagen'),
  q('de', 'de/ruecksendung', 'wer zahlt das Rückporto?', 'Porto für die Rücksendung zahlen Sie selbst'),

  q('de', 'de/bezahlung', 'kann ich mit ec karte zahlen', 'Girocard'),
  q('de', 'de/bezahlung', 'Kreditkarte?', 'Visa und Mastercard'),
  q('de', 'de/bezahlung', 'kann ich per ueberweisung bezahlen', 'Vorkasse mit Banküberweisung'),
  q('de', 'de/bezahlung', 'kann man mit dem handy bezahlen', 'Apple Pay oder Google Pay'),

  q('de', 'de/kundenkarte', 'wie funktioniert die treuekarte', '100 Punkte'),
  q('de', 'de/kundenkarte', 'verfallen meine punkte', 'zwei Jahre gültig'),
  q('de', 'de/kundenkarte', 'karte verloren, was nun?', 'Ihre Punkte bleiben'),
  q('de', 'de/kundenkarte', 'gibt es rabatt zum geburtstag meiner katze', '10 % Rabatt'),

  q('de', 'de/hundesalon', 'die krallen von meinem hund sind zu lang', 'Krallenschneiden kostet 8 €'),
  q('de', 'de/hundesalon', 'was kostet baden und foehnen fuer einen kleinen hund', '32 €'),
  q('de', 'de/hundesalon', 'katze scheren lassen preis', '45 €'),
  q('de', 'de/hundesalon', 'das fell meines hundes ist total verfilzt', '12 € pro Viertelstunde'),
  q('de', 'de/hundesalon', 'was kostet der hundefriseur fuer einen schaeferhund', '55 €', '74 €'),

  q('de', 'de/hundesalon-termine', 'ich muss meinen termin im hundesalon absagen, kostet das was?', 'bis 24 Stunden vorher kostenlos'),
  q('de', 'de/hundesalon-termine', 'wie kann ich einen termin fürs trimmen buchen', 'Buchungsseite'),
  q('de', 'de/hundesalon-termine', 'was passiert wenn ich zu spaet komme', 'mehr als 15 Minuten zu spät'),
  q('de', 'de/hundesalon-termine', 'wie lange dauert das trimmen', 'zwei bis drei Stunden'),

  q('de', 'de/sprechstunde', 'wann ist die tierarzthelferin da', 'Mittwoch von 14:00 bis 16:00'),
  q('de', 'de/sprechstunde', 'muss ich fur die sprechstunde einen termin machen', 'ohne Termin mit Ihrem Tier'),
  q('de', 'de/sprechstunde', 'kostet die Beratung etwas?', '7,50 €'),
  q('de', 'de/sprechstunde', 'kann sie meinem hund antibiotika verschreiben', 'verschreibt keine Medikamente'),

  q('de', 'de/welpenkurs', 'was kostet die welpenschule', 'kostet 95 €'),
  q('de', 'de/welpenkurs', 'wie alt muss mein welpe sein', 'zwischen 9 und 16 Wochen'),
  q('de', 'de/welpenkurs', 'spricht der trainer deutsch?', 'Niederländisch, Deutsch und Englisch'),

  q('de', 'de/gutscheine', 'gibt es geschenkgutscheine', '10 € bis 150 €'),
  q('de', 'de/gutscheine', 'wie lange ist ein gutschein gueltig', 'ein Jahr gültig'),
  q('de', 'de/gutscheine', 'kann ich den gutschein auch im hundesalon einloesen? danke und tschuess', 'im Hundesalon und für den Welpenkurs'),

  q('de', null, 'verkaufen Sie auch Kätzchen'),
  q('de', null, 'kann ich mit bitcoin zahlen'),
  q('de', null, 'gibt es eine hundewaschanlage zur selbstbedienung'),
  q('de', null, 'habt ihr eine ladesäule für e-autos'),
  q('de', null, 'liefert ihr auch nach belgien'),
  q('de', null, 'kann die helferin meine katze chippen'),
  q('de', null, 'findet der welpenkurs bei regen drinnen statt'),
  q('de', null, 'kann ich meine punkte mit meinem mann teilen'),
  q('de', null, 'verpackt ihr gutscheine als geschenk'),
  q('de', null, 'was kostet ein kratzbaum'),
];

export const petShopSet: EvalSet = {
  name: 'pet-shop',
  title: 'development: a pet shop with a grooming salon, English, Dutch and German',
  heldOut: false,
  pages,
  questions,
};
