/**
 * HELD OUT. A second trade for the knowledge evaluation (issue 36, step 3; docs/performance.md, "Knowledge answers"):
 * Fixlab, a phone and laptop repair shop in Arnhem with a web shop of accessories, twelve pages in English and in
 * Dutch, and the questions its customers ask, written the way they write (other words than the page, greetings, names
 * and places around the question, typos, no capitals, UK and US spellings, Dutch compounds, a problem instead of the
 * service, fragments), plus questions near a page's topic whose fact no page holds: those must get "I don't know".
 *
 * Written on 2026-11-28 by a helper session of issue 36, before any change to the search's rules, without reading the
 * search's word lists (thesaurus, query, vocabulary, words) or the tuning set's questions (../shop.ts).
 * Held out: it must never be used to tune the search. Never add a question's words to the search's lists or to these
 * pages to make it pass; a miss here is a figure, not a bug report against this file.
 * Changing a question after a search change voids the figure.
 */
import { pageBuilder, question as q, type EvalSet } from '../eval-set.ts';

const page = pageBuilder('https://fixlab-arnhem.example');

export const secondTradePages = [
  page('en/phone-repair', 'en', 'Phone repair prices', [
    'We repair iPhones and Samsung Galaxy phones in our workshop in Arnhem. Most repairs are done within one hour while you wait; for older models we may need to order the part, which takes two working days.',
    'Prices including parts and labour: an iPhone screen replacement costs from €89 (iPhone 11) to €289 (iPhone 15 Pro). A new battery for any iPhone costs €69. Replacing a Samsung Galaxy screen costs from €129. A charging port repair costs €59 for both brands.',
    'Every repair starts with a free check of your phone. If we cannot repair it, you pay nothing.',
  ]),
  page('nl/telefoon-reparatie', 'nl', 'Telefoon repareren: prijzen', [
    'Wij repareren iPhones en Samsung Galaxy-telefoons in onze werkplaats in Arnhem. De meeste reparaties zijn binnen een uur klaar en u kunt erop wachten; voor oudere modellen bestellen we soms het onderdeel, dat duurt twee werkdagen.',
    'Prijzen inclusief onderdelen en arbeid: een nieuw iPhone-scherm kost van € 89 (iPhone 11) tot € 289 (iPhone 15 Pro). Een nieuwe batterij voor elke iPhone kost € 69. Een Samsung Galaxy-scherm vervangen kost vanaf € 129. Een reparatie van de laadpoort kost € 59 voor beide merken.',
    'Elke reparatie begint met een gratis controle van uw telefoon. Kunnen we hem niet repareren, dan betaalt u niets.',
  ]),

  page('en/laptop-repair', 'en', 'Laptop repair', [
    'We repair MacBooks and Windows laptops (HP, Lenovo, Dell, Asus and Acer). A diagnosis costs €35; if you let us do the repair, the diagnosis is deducted from the price.',
    'A laptop repair takes three to five working days. Common prices: replacing a keyboard from €119, replacing a broken laptop screen from €149, upgrading to a 1 TB SSD including reinstalling your system €179. Cleaning the fan and renewing the thermal paste of a laptop that overheats costs €45.',
  ]),
  page('nl/laptop-reparatie', 'nl', 'Laptop reparatie', [
    'Wij repareren MacBooks en Windows-laptops (HP, Lenovo, Dell, Asus en Acer). Een diagnose kost € 35; laat u de reparatie bij ons doen, dan trekken we de diagnose af van de prijs.',
    'Een laptopreparatie duurt drie tot vijf werkdagen. Veelvoorkomende prijzen: toetsenbord vervangen vanaf € 119, een kapot laptopscherm vervangen vanaf € 149, upgrade naar een SSD van 1 TB inclusief herinstallatie van uw systeem € 179. Een laptop die te warm wordt: ventilator schoonmaken en nieuwe koelpasta voor € 45.',
  ]),

  page('en/water-damage', 'en', 'Water damage', [
    'Did your phone fall into water or did you spill a drink over your laptop? Switch the device off straight away and do not charge it. Do not put it in rice: rice does not dry the inside and its dust gets into the ports.',
    'Bring the device to us within 24 hours if you can. We open it, clean the board in an ultrasonic bath and dry it; this water damage treatment costs €49 and takes one to three working days. With liquid damage we cannot guarantee that the device will work again.',
  ]),
  page('nl/waterschade', 'nl', 'Waterschade', [
    'Is uw telefoon in het water gevallen of heeft u drinken over uw laptop gemorst? Zet het apparaat meteen uit en laad het niet op. Leg het niet in rijst: rijst droogt de binnenkant niet en het stof komt in de poorten.',
    'Breng het apparaat het liefst binnen 24 uur bij ons. We openen het, reinigen de printplaat in een ultrasoon bad en drogen het; deze waterschadebehandeling kost € 49 en duurt een tot drie werkdagen. Bij vochtschade kunnen we niet garanderen dat het apparaat weer werkt.',
  ]),

  page('en/warranty', 'en', 'Warranty on repairs', [
    'Every repair comes with a 6-month warranty on the part we fitted and on our work. If the same problem returns within those 6 months, we fix it free of charge.',
    'The warranty does not cover new damage, such as a screen that breaks after a fall, water damage, or a device that someone else opened after our repair. Keep your receipt: it is your proof of warranty.',
    "We are an independent repair shop, not an Apple Authorised Service Provider. A repair by us may end the manufacturer's warranty on your device; if your iPhone is less than one year old, ask Apple first.",
  ]),
  page('nl/garantie', 'nl', 'Garantie op reparaties', [
    'Op elke reparatie krijgt u 6 maanden garantie op het onderdeel dat we plaatsten en op ons werk. Komt hetzelfde probleem binnen die 6 maanden terug, dan verhelpen we het kosteloos.',
    'De garantie geldt niet voor nieuwe schade, zoals een scherm dat na een val breekt, waterschade, of een apparaat dat na onze reparatie door iemand anders is geopend. Bewaar uw bon: die is uw garantiebewijs.',
    'Wij zijn een onafhankelijke reparateur, geen Apple Authorised Service Provider. Een reparatie door ons kan de fabrieksgarantie van uw apparaat beëindigen; is uw iPhone jonger dan een jaar, vraag dan eerst Apple.',
  ]),

  page('en/appointments', 'en', 'Appointments and mail-in repair', [
    'You can walk in without an appointment, but with an appointment you go first. Book a time slot on our website or call us on 026 123 45 67.',
    'Not in Arnhem? Send your device in by post: fill in the mail-in form and we email you a free shipping label. We send the repaired device back insured with PostNL within five working days of receiving it.',
    'Business customers with five or more devices can have them collected at their office by our courier.',
  ]),
  page('nl/afspraak', 'nl', 'Afspraak maken en opsturen', [
    'U kunt zonder afspraak binnenlopen, maar met een afspraak bent u als eerste aan de beurt. Reserveer een tijd op onze website of bel ons op 026 123 45 67.',
    'Niet in Arnhem? Stuur uw apparaat per post op: vul het opstuurformulier in en we mailen u een gratis verzendlabel. We sturen het gerepareerde apparaat verzekerd met PostNL terug, binnen vijf werkdagen nadat we het ontvingen.',
    'Zakelijke klanten met vijf of meer apparaten kunnen ze door onze koerier op kantoor laten ophalen.',
  ]),

  page('en/opening-hours', 'en', 'Opening hours and address', [
    'Fixlab is at Steenstraat 42, 6828 CK Arnhem, a ten-minute walk from Arnhem Centraal station. You can park in the Musis Sacrum car park, two minutes away.',
    'We are open Monday from 12:00 to 18:00, Tuesday to Friday from 9:30 to 18:00 and Saturday from 10:00 to 17:00. On Thursday we stay open until 21:00. We are closed on Sunday, except on the first Sunday of the month (12:00 to 17:00).',
  ]),
  page('nl/openingstijden', 'nl', 'Openingstijden en adres', [
    'Fixlab zit aan de Steenstraat 42, 6828 CK Arnhem, tien minuten lopen van station Arnhem Centraal. U parkeert in parkeergarage Musis Sacrum, op twee minuten afstand.',
    'We zijn open op maandag van 12:00 tot 18:00, dinsdag tot en met vrijdag van 9:30 tot 18:00 en zaterdag van 10:00 tot 17:00. Op donderdag zijn we open tot 21:00. Op zondag zijn we dicht, behalve op de eerste zondag van de maand (12:00 tot 17:00).',
  ]),

  page('en/shipping', 'en', 'Shipping', [
    'Accessories ordered before 22:00 on a working day are delivered the next working day in the Netherlands by PostNL. Delivery to Belgium takes two to three working days. We ship to the Netherlands and Belgium only.',
    "Shipping costs €3.95 in the Netherlands and €6.95 to Belgium. Orders from €25 are shipped free within the Netherlands. You can also pick up your order in our shop for free: choose 'collect in store' at checkout and we email you when it is ready, usually within two hours.",
  ]),
  page('nl/verzending', 'nl', 'Verzending', [
    'Accessoires die u op een werkdag vóór 22:00 bestelt, worden de volgende werkdag in Nederland bezorgd door PostNL. Bezorging in België duurt twee tot drie werkdagen. We versturen alleen naar Nederland en België.',
    "De verzendkosten zijn € 3,95 in Nederland en € 6,95 naar België. Bestellingen vanaf € 25 versturen we gratis binnen Nederland. U kunt uw bestelling ook gratis afhalen in de winkel: kies bij het afrekenen 'afhalen in de winkel', dan mailen we u zodra het klaarligt, meestal binnen twee uur.",
  ]),

  page('en/returns', 'en', 'Returns', [
    'You may return accessories within 30 days of delivery, unused and in their original packaging. Register the return in your account; you pay the return shipping yourself unless the item is faulty.',
    'We refund the amount within five working days after we receive the return. A screen protector that has been applied cannot be returned. Repairs cannot be returned, but they are covered by our warranty.',
  ]),
  page('nl/retourneren', 'nl', 'Retourneren', [
    'Accessoires mag u binnen 30 dagen na bezorging retourneren, ongebruikt en in de originele verpakking. Meld de retour aan in uw account; de retourkosten zijn voor uzelf, behalve als het artikel defect is.',
    'We betalen het bedrag terug binnen vijf werkdagen nadat we de retour hebben ontvangen. Een screenprotector die al is aangebracht, kunt u niet retourneren. Reparaties kunt u niet retourneren, maar daarop zit onze garantie.',
  ]),

  page('en/payment', 'en', 'Payment', [
    'In our web shop you can pay with iDEAL, Bancontact, credit card (Visa, Mastercard, American Express), PayPal and Klarna. With Klarna you pay afterwards, within 30 days.',
    'In the shop we accept debit and credit cards, Apple Pay and Google Pay, and cash. You pay for a repair when you collect your device. Companies can ask for an invoice in the company name with VAT shown.',
  ]),
  page('nl/betalen', 'nl', 'Betalen', [
    'In onze webshop betaalt u met iDEAL, Bancontact, creditcard (Visa, Mastercard, American Express), PayPal en Klarna. Met Klarna betaalt u achteraf, binnen 30 dagen.',
    'In de winkel kunt u pinnen, met creditcard, Apple Pay en Google Pay betalen, of contant. Een reparatie betaalt u als u uw apparaat ophaalt. Bedrijven kunnen een factuur op bedrijfsnaam met btw vragen.',
  ]),

  page('en/accessories', 'en', 'Accessories and screen protectors', [
    'We sell cases, screen protectors, chargers and cables from Spigen, OtterBox, Belkin and Anker, for iPhone, Samsung and Google Pixel.',
    'A tempered glass screen protector costs €14.95; when you buy it in our shop we put it on for free. An original Apple 20W USB-C charger costs €24.95 and a braided USB-C cable of 2 metres €19.95.',
  ]),
  page('nl/accessoires', 'nl', 'Accessoires en screenprotectors', [
    'We verkopen hoesjes, screenprotectors, opladers en kabels van Spigen, OtterBox, Belkin en Anker, voor iPhone, Samsung en Google Pixel.',
    'Een screenprotector van gehard glas kost € 14,95; koopt u hem in de winkel, dan plakken we hem gratis voor u. Een originele Apple 20W USB-C-lader kost € 24,95 en een gevlochten USB-C-kabel van 2 meter € 19,95.',
  ]),

  page('en/trade-in', 'en', 'Sell your phone, and refurbished phones', [
    'We buy used iPhones and Samsung Galaxy phones that are at most five years old. Ask for a price with the trade-in form on our website; the price holds for 7 days. Bring the phone to the shop or send it in, and we pay you by bank transfer within two working days after checking it.',
    'Our refurbished phones have been tested on 40 points, have a battery of at least 85% capacity and come with a 12-month warranty.',
  ]),
  page('nl/inruil', 'nl', 'Telefoon verkopen en refurbished telefoons', [
    'We kopen gebruikte iPhones en Samsung Galaxy-telefoons die hooguit vijf jaar oud zijn. Vraag een prijs aan met het inruilformulier op onze website; de prijs is 7 dagen geldig. Breng de telefoon naar de winkel of stuur hem op; na controle betalen we u binnen twee werkdagen per bankoverschrijving.',
    'Onze refurbished telefoons zijn op 40 punten getest, hebben een batterij met minstens 85% capaciteit en krijgen 12 maanden garantie.',
  ]),

  page('en/data', 'en', 'Your data and data recovery', [
    'Your photos and files stay on your device during a repair: we do not need to erase it, and we only look at what we must to test the repair. Still, make a backup before you bring your device in. We ask for your passcode only when a repair has to be tested with the phone unlocked.',
    'A phone that no longer turns on? We can often still get the photos off it. Data recovery costs from €79; you pay only if we recover your data. Phones we buy are wiped with certified software.',
  ]),
  page('nl/gegevens', 'nl', 'Uw gegevens en dataherstel', [
    "Uw foto's en bestanden blijven tijdens een reparatie op uw apparaat staan: we hoeven het niet te wissen en we kijken alleen naar wat nodig is om de reparatie te testen. Maak toch een back-up voordat u uw apparaat brengt. We vragen uw toegangscode alleen als een reparatie met ontgrendelde telefoon getest moet worden.",
    "Gaat uw telefoon niet meer aan? Vaak kunnen we de foto's er nog af halen. Dataherstel kost vanaf € 79; u betaalt alleen als we uw gegevens terughalen. Telefoons die we inkopen, wissen we met gecertificeerde software.",
  ]),
];

export const secondTradeQuestions = [
  // English, answerable.
  q('en', 'en/phone-repair', 'how much to fix a cracked iphone 11 screen?', '€89'),
  q('en', 'en/phone-repair', "Hi, I'm Jan. What does a new battery for my iPhone cost?", '€69'),
  q('en', 'en/phone-repair', 'my phone wont charge anymore, the port is loose. price?', '€59'),
  q('en', 'en/phone-repair', 'Do you repair samsung galaxy displays and what do you charge', '€129'),
  q('en', 'en/phone-repair', 'how long does it take to repair a phone', 'within one hour'),
  q('en', 'en/phone-repair', "what if you can't fix my phone, do I still have to pay?", 'you pay nothing'),
  q('en', 'en/phone-repair', 'my screen cracked, what now?', '€89', '€129'),
  q('en', 'en/laptop-repair', 'How much do you charge to look at my laptop?', '€35'),
  q('en', 'en/laptop-repair', 'macbook keyboard broken, cost to replace?', '€119'),
  q('en', 'en/laptop-repair', 'how many days for a laptop repair', 'three to five working days'),
  q('en', 'en/laptop-repair', 'my laptop gets really hot and the fan is loud', '€45'),
  q('en', 'en/laptop-repair', 'could you put an ssd in my old lenovo? what would that cost', '€179'),
  q('en', 'en/laptop-repair', 'Hello! Do you also fix Dell laptops? Thanks, Marieke', 'HP, Lenovo, Dell'),
  q('en', 'en/laptop-repair', 'laptop display smashed, price?', '€149'),
  q('en', 'en/water-damage', 'I dropped my phone in the toilet, what should I do?', 'switch the device off', 'do not charge it'),
  q('en', 'en/water-damage', 'should i put my wet phone in rice', 'do not put it in rice'),
  q('en', 'en/water-damage', 'spilled coffee on my macbook, can you help? how much?', '€49'),
  q('en', 'en/warranty', 'how long is the guarantee on a repair?', '6-month', '6 months'),
  q('en', 'en/warranty', 'the new screen you fitted stopped working after 2 months', 'free of charge', '6 months'),
  q('en', 'en/warranty', 'is a screen that cracked when i dropped it covered by warranty', 'does not cover new damage'),
  q('en', 'en/warranty', 'will a repair at your shop void my apple warrenty?', 'manufacturer'),
  q('en', 'en/warranty', 'are you an apple authorized repair center?', 'not an Apple Authorised Service Provider'),
  q('en', 'en/appointments', 'do I need an appointment or can I just walk in?', 'without an appointment'),
  q('en', 'en/appointments', "what's your phone number to book a repair", '026 123 45 67'),
  q('en', 'en/appointments', 'I live in Groningen, can I post my laptop to you?', 'free shipping label'),
  q('en', 'en/appointments', 'we have 12 company laptops, can you pick them up at our office?', 'courier'),
  q('en', 'en/opening-hours', 'opening hours sunday?', 'first Sunday of the month'),
  q('en', 'en/opening-hours', 'what time do you close on thursday', '21:00'),
  q('en', 'en/opening-hours', 'where is your shop located', 'Steenstraat 42'),
  q('en', 'en/opening-hours', 'Is there parking near the store?', 'Musis Sacrum'),
  q('en', 'en/opening-hours', 'are you open monday mornings', 'Monday from 12:00'),
  q('en', 'en/shipping', 'if i order a case tonight when will it arrive?', 'next working day'),
  q('en', 'en/shipping', 'what are the delivery costs?', '€3.95'),
  q('en', 'en/shipping', 'free shipping from what amount', '€25'),
  q('en', 'en/shipping', 'do you send orders to Germany?', 'Netherlands and Belgium only'),
  q('en', 'en/shipping', 'Can I collect my order at the shop', 'collect in store', 'pick up your order'),
  q('en', 'en/shipping', 'Hello! Quick question: how much is postage to Antwerp?', '€6.95'),
  q('en', 'en/returns', 'I want to send back a phone case, is that possible?', '30 days of delivery'),
  q('en', 'en/returns', 'when do I get my money back after returning something?', 'refund the amount within five working days'),
  q('en', 'en/returns', 'can i return a screen protector i already stuck on', 'cannot be returned'),
  q('en', 'en/payment', 'can i pay later', 'Klarna'),
  q('en', 'en/payment', 'Do you take cash in the shop?', 'and cash'),
  q('en', 'en/payment', 'do you accept amex', 'American Express'),
  q('en', 'en/payment', 'I need an invoice with VAT for my company', 'invoice in the company name'),
  q('en', 'en/accessories', 'what does a tempered glass protector cost, and do you fit it?', '€14.95'),
  q('en', 'en/accessories', 'do you sell original apple chargers', '€24.95'),
  q('en', 'en/accessories', 'which brands of phone cases do you carry', 'Spigen'),
  q('en', 'en/trade-in', 'can I sell my old iPhone to you?', 'trade-in form', 'bank transfer'),
  q('en', 'en/trade-in', 'what warranty comes with a refurbished phone', '12-month'),
  q('en', 'en/data', 'will you delete my photos when you fix my phone?', 'stay on your device'),
  q('en', 'en/data', "my phone is dead but I need the pictures on it", '€79'),

  // English, unanswerable: near a page's topic, but no page holds the fact.
  q('en', null, 'how much is it to replace an ipad screen?'),
  q('en', null, 'price to replace the battery of a macbook air?'),
  q('en', null, 'do you repair nintendo switch consoles'),
  q('en', null, 'can I get a loan phone while mine is being repaired?'),
  q('en', null, 'is there a student discount'),
  q('en', null, 'is the shop wheelchair accessible?'),
  q('en', null, 'do you sell gift cards'),
  q('en', null, 'how much does a camera repair on a pixel 8 cost?'),
  q('en', null, 'can you unlock my phone from my network provider'),
  q('en', null, 'my apple watch screen is cracked, what does a new one cost?'),
  q('en', null, 'are you hiring repair technicians?'),
  q('en', null, 'what is the price of replacing the back glass of a samsung'),

  // Dutch, answerable.
  q('nl', 'nl/telefoon-reparatie', 'wat kost een nieuw scherm voor een iphone 11?', '€ 89'),
  q('nl', 'nl/telefoon-reparatie', 'Hoi, ik ben Sanne. Wat kost het om de accu van mijn iPhone te vervangen?', '€ 69'),
  q('nl', 'nl/telefoon-reparatie', 'mijn telefoon laad niet meer op, wat kost een nieuwe oplaadpoort', '€ 59'),
  q('nl', 'nl/telefoon-reparatie', 'reparatiekosten samsung scherm?', '€ 129'),
  q('nl', 'nl/telefoon-reparatie', 'hoe lang duurt het maken van mijn telefoon', 'binnen een uur'),
  q('nl', 'nl/telefoon-reparatie', 'moet ik betalen als jullie hem niet kunnen maken?', 'betaalt u niets'),
  q('nl', 'nl/laptop-reparatie', 'wat kost het onderzoeken van mijn laptop', '€ 35'),
  q('nl', 'nl/laptop-reparatie', 'hoeveel dagen duurt het repareren van een laptop', 'drie tot vijf werkdagen'),
  q('nl', 'nl/laptop-reparatie', 'toetsenbord van mijn macbook kapot, prijs?', '€ 119'),
  q('nl', 'nl/laptop-reparatie', 'mijn laptop wordt heel heet en de ventilator maakt herrie', '€ 45'),
  q('nl', 'nl/laptop-reparatie', 'kunnen jullie een ssd in mijn laptop zetten', '€ 179'),
  q('nl', 'nl/waterschade', 'mijn telefoon is in de wc gevallen, wat moet ik doen?', 'zet het apparaat meteen uit', 'laad het niet op'),
  q('nl', 'nl/waterschade', 'moet ik mijn natte telefoon in rijst leggen?', 'niet in rijst'),
  q('nl', 'nl/waterschade', 'koffie over mijn laptop gemorst, wat kost dat?', '€ 49'),
  q('nl', 'nl/garantie', 'hoelang garantie heb ik op een reparatie', '6 maanden'),
  q('nl', 'nl/garantie', 'valt een gebarsten scherm na een val onder de garantie?', 'niet voor nieuwe schade'),
  q('nl', 'nl/garantie', 'vervalt mijn apple garantie als jullie mijn iphone maken?', 'fabrieksgarantie'),
  q('nl', 'nl/afspraak', 'moet ik een afspraak maken of kan ik zo langskomen?', 'zonder afspraak'),
  q('nl', 'nl/afspraak', 'wat is jullie telefoonnummer', '026 123 45 67'),
  q('nl', 'nl/afspraak', 'Ik woon in Groningen, kan ik mijn laptop opsturen? Groetjes, Pieter', 'gratis verzendlabel'),
  q('nl', 'nl/openingstijden', 'zijn jullie zondag open', 'eerste zondag van de maand'),
  q('nl', 'nl/openingstijden', 'hoe laat gaan jullie donderdag dicht', '21:00'),
  q('nl', 'nl/openingstijden', 'waar zitten jullie', 'Steenstraat 42'),
  q('nl', 'nl/openingstijden', 'kan ik in de buurt parkeren', 'Musis Sacrum'),
  q('nl', 'nl/openingstijden', 'openingstijden maandag?', 'maandag van 12:00'),
  q('nl', 'nl/verzending', 'als ik vanavond bestel, wanneer heb ik het dan?', 'volgende werkdag'),
  q('nl', 'nl/verzending', 'wat zijn de verzendkosten', '€ 3,95'),
  q('nl', 'nl/verzending', 'vanaf welk bedrag is verzenden gratis?', '€ 25'),
  q('nl', 'nl/verzending', 'leveren jullie ook in duitsland?', 'alleen naar Nederland en België'),
  q('nl', 'nl/verzending', 'kan ik mijn bestelling ophalen bij jullie?', 'afhalen in de winkel'),
  q('nl', 'nl/verzending', 'Hallo! Hoeveel kost het versturen naar Antwerpen?', '€ 6,95'),
  q('nl', 'nl/retourneren', 'kan ik een hoesje terugsturen', '30 dagen na bezorging'),
  q('nl', 'nl/retourneren', 'wanneer krijg ik mijn geld terug', 'bedrag terug binnen vijf werkdagen'),
  q('nl', 'nl/retourneren', 'kan ik een geplakte screenprotector retour sturen', 'niet retourneren'),
  q('nl', 'nl/betalen', 'kan ik achteraf betalen?', 'Klarna'),
  q('nl', 'nl/betalen', 'kan ik contant afrekenen in de winkel', 'of contant'),
  q('nl', 'nl/betalen', 'ik heb een factuur met btw nodig voor mijn bedrijf', 'factuur op bedrijfsnaam'),
  q('nl', 'nl/accessoires', 'wat kost een glazen screenprotector en plakken jullie die?', '€ 14,95'),
  q('nl', 'nl/accessoires', 'verkopen jullie originele apple opladers', '€ 24,95'),
  q('nl', 'nl/inruil', 'kan ik mijn oude iphone aan jullie verkopen', 'inruilformulier', 'bankoverschrijving'),
  q('nl', 'nl/inruil', 'hoeveel garantie op een refurbished telefoon', '12 maanden'),
  q('nl', 'nl/gegevens', 'mijn telefoon doet het niet meer maar ik wil mijn fotos terug', '€ 79'),
  q('nl', 'nl/gegevens', 'wissen jullie mijn gegevens bij een reparatie?', 'op uw apparaat staan'),

  // Dutch, unanswerable: near a page's topic, but no page holds the fact.
  q('nl', null, 'wat kost een nieuw scherm voor een ipad?'),
  q('nl', null, 'wat kost een nieuwe batterij voor een macbook air'),
  q('nl', null, 'repareren jullie ook een playstation 5?'),
  q('nl', null, 'krijg ik een leentelefoon tijdens de reparatie?'),
  q('nl', null, 'hebben jullie studentenkorting'),
  q('nl', null, 'is de winkel rolstoeltoegankelijk?'),
  q('nl', null, 'verkopen jullie cadeaubonnen'),
  q('nl', null, 'wat kost het vervangen van de camera van een google pixel 8'),
  q('nl', null, 'kunnen jullie mijn telefoon simlockvrij maken'),
  q('nl', null, 'het scherm van mijn apple watch is gebarsten, wat kost een nieuw?'),
  q('nl', null, 'zoeken jullie nog personeel?'),
  q('nl', null, 'wat kost een nieuwe achterkant voor een samsung'),
];

export const secondTradeSet: EvalSet = {
  name: 'second_trade',
  title: 'second trade (phone and laptop repair, English and Dutch)',
  heldOut: true,
  pages: secondTradePages,
  questions: secondTradeQuestions,
};
