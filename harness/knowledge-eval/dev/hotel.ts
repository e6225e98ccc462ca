/**
 * Development set: tuned on; the held-out sets are the figure we report.
 *
 * A small hotel with a restaurant on the Chiemsee: eight pages (rooms and rates, check-in and check-out, breakfast,
 * the restaurant, arrival and parking, cancellation and payment, pets and children, bikes and sauna), in English and
 * German. Questions as guests write them: other words than the page (elevator for lift, city tax for tourist tax),
 * greetings, names and flights around the question, sign-offs, typos, no capitals, capitals, compounds, umlauts typed
 * as ae/oe/ue or dropped, numbers in words, problems instead of questions, fragments, du and Sie. Each answerable
 * question names its page and the fact as the page writes it; the unanswerable ones sit close to a page and ask what
 * it does not say. The search helper tunes general mechanisms on this set; never tune by adding a question's words to
 * a page.
 */
import { pageBuilder, question as q, type EvalSet } from '../eval-set.ts';

const page = pageBuilder('https://hotel-seerose.example');

const pages = [
  // ── English ──
  page('en/rooms', 'en', 'Rooms and rates', [
    'Our 16 rooms all have a private bathroom, a flat-screen TV and free Wi-Fi. A single room costs €89 per night, a double room €129 and a family room for up to four people €169, breakfast included.',
    'Rooms with a lake view cost €15 more per night. A lift takes you to all floors, and all rooms are non-smoking.',
  ]),
  page('en/check-in', 'en', 'Check-in and check-out', [
    'Check-in is from 15:00 to 21:00 at reception. If you arrive later, call us and we leave your key in the key safe by the front door, with a code we send you by text message.',
    'Check-out is until 11:00. A late check-out until 14:00 costs €25. On the day you leave we store your luggage free of charge.',
  ]),
  page('en/breakfast', 'en', 'Breakfast', [
    'Breakfast is a buffet, served from 7:00 to 10:30 on weekdays and from 7:30 to 11:00 at weekends, with bread from the village bakery, eggs from a farm nearby and homemade jam.',
    'Guests not staying at the hotel pay €19 for breakfast. Gluten-free and lactose-free products are available on request. Breakfast in your room costs €9 extra per person.',
  ]),
  page('en/restaurant', 'en', 'Restaurant', [
    'Our restaurant is open from Wednesday to Sunday from 17:30 to 22:00; the kitchen takes its last orders at 21:00. On Monday and Tuesday the restaurant is closed.',
    'We cook regional dishes with fish from the Chiemsee, and every evening there is a vegetarian and a vegan main course. In summer you eat on the terrace overlooking the lake.',
    'Book a table by phone on 08051 96120 or at reception. Half board (breakfast and a three-course dinner) costs €34 per person per day.',
  ]),
  page('en/arrival', 'en', 'Arrival and parking', [
    'The hotel is at Seestraße 14, 83209 Prien am Chiemsee, five minutes on foot from the lake. Prien station is 800 metres away; on request we pick you up from the station for free.',
    'Parking in our car park is free for hotel guests. There are two charging points for electric cars, at €0.45 per kWh. Bicycles and motorbikes can stay in our locked garage.',
  ]),
  page('en/cancellation-and-payment', 'en', 'Cancellation and payment', [
    'You can cancel free of charge up to 7 days before arrival. If you cancel later we charge 80% of the booked price, and if you do not arrive at all, the full price.',
    'You pay on departure in cash, with girocard, Visa or Mastercard; we do not accept American Express. The tourist tax of €2.80 per adult per night is added to the bill.',
  ]),
  page('en/pets-and-children', 'en', 'Pets and children', [
    'Dogs are welcome for €12 per night, with a blanket and bowls. Dogs may come onto the terrace but not into the breakfast room.',
    "Children under 6 stay free in their parents' room. A cot and a high chair are free; an extra bed costs €30 per night.",
  ]),
  page('en/bikes-and-sauna', 'en', 'Bikes, sauna and the lake', [
    'At reception you can rent bikes for €15 per day and e-bikes for €35 per day. Our sauna is open every day from 16:00 to 21:00 and free for hotel guests.',
    'The boats to the island of Herrenchiemsee leave from Prien harbour, a ten-minute walk away. We lend you bath towels for the lake.',
  ]),

  // ── German ──
  page('de/zimmer', 'de', 'Zimmer und Preise', [
    'Unsere 16 Zimmer haben alle ein eigenes Bad, einen Flachbildfernseher und kostenloses WLAN. Ein Einzelzimmer kostet 89 € pro Nacht, ein Doppelzimmer 129 € und ein Familienzimmer für bis zu vier Personen 169 €, jeweils mit Frühstück.',
    'Zimmer mit Seeblick kosten 15 € mehr pro Nacht. Ein Aufzug fährt in alle Etagen, und alle Zimmer sind Nichtraucherzimmer.',
  ]),
  page('de/anreise-abreise', 'de', 'Anreise und Abreise', [
    'Check-in ist von 15:00 bis 21:00 an der Rezeption. Wenn Sie später ankommen, rufen Sie uns an: Wir legen Ihren Schlüssel in den Schlüsselsafe neben der Eingangstür, den Code schicken wir Ihnen per SMS.',
    'Check-out ist bis 11:00. Ein später Check-out bis 14:00 kostet 25 €. Am Abreisetag bewahren wir Ihr Gepäck kostenlos auf.',
  ]),
  page('de/fruehstueck', 'de', 'Frühstück', [
    'Das Frühstück ist ein Buffet, werktags von 7:00 bis 10:30 und am Wochenende von 7:30 bis 11:00, mit Brot vom Dorfbäcker, Eiern vom Bauernhof nebenan und hausgemachter Marmelade.',
    'Gäste, die nicht im Hotel übernachten, zahlen 19 € für das Frühstück. Glutenfreie und laktosefreie Produkte gibt es auf Anfrage. Frühstück auf dem Zimmer kostet 9 € extra pro Person.',
  ]),
  page('de/restaurant', 'de', 'Restaurant', [
    'Unser Restaurant ist von Mittwoch bis Sonntag von 17:30 bis 22:00 geöffnet; die Küche nimmt die letzten Bestellungen um 21:00 an. Am Montag und Dienstag ist das Restaurant geschlossen.',
    'Wir kochen regionale Gerichte mit Fisch aus dem Chiemsee, und jeden Abend gibt es ein vegetarisches und ein veganes Hauptgericht. Im Sommer essen Sie auf der Terrasse mit Blick auf den See.',
    'Reservieren Sie einen Tisch telefonisch unter 08051 96120 oder an der Rezeption. Halbpension (Frühstück und ein Abendessen mit drei Gängen) kostet 34 € pro Person und Tag.',
  ]),
  page('de/anfahrt-parken', 'de', 'Anfahrt und Parken', [
    'Das Hotel liegt in der Seestraße 14, 83209 Prien am Chiemsee, fünf Gehminuten vom See. Der Bahnhof Prien ist 800 Meter entfernt; auf Wunsch holen wir Sie kostenlos vom Bahnhof ab.',
    'Das Parken auf unserem Parkplatz ist für Hotelgäste kostenlos. Es gibt zwei Ladestationen für Elektroautos, zu 0,45 € pro kWh. Fahrräder und Motorräder stehen in unserer abschließbaren Garage.',
  ]),
  page('de/stornierung-zahlung', 'de', 'Stornierung und Bezahlung', [
    'Sie können bis 7 Tage vor der Anreise kostenlos stornieren. Bei einer späteren Stornierung berechnen wir 80 % des gebuchten Preises, wenn Sie gar nicht anreisen, den vollen Preis.',
    'Sie bezahlen bei der Abreise bar, mit Girocard, Visa oder Mastercard; American Express akzeptieren wir nicht. Die Kurtaxe von 2,80 € pro Erwachsenem und Nacht kommt zur Rechnung hinzu.',
  ]),
  page('de/haustiere-kinder', 'de', 'Haustiere und Kinder', [
    'Hunde sind für 12 € pro Nacht willkommen, mit Decke und Näpfen. Hunde dürfen auf die Terrasse, aber nicht in den Frühstücksraum.',
    'Kinder unter 6 Jahren übernachten kostenlos im Zimmer der Eltern. Babybett und Hochstuhl sind kostenlos; ein Zustellbett kostet 30 € pro Nacht.',
  ]),
  page('de/fahrrad-sauna', 'de', 'Fahrräder, Sauna und der See', [
    'An der Rezeption leihen Sie Fahrräder für 15 € pro Tag und E-Bikes für 35 € pro Tag. Unsere Sauna ist täglich von 16:00 bis 21:00 geöffnet und für Hotelgäste kostenlos.',
    'Die Schiffe zur Insel Herrenchiemsee fahren vom Hafen in Prien ab, zehn Gehminuten entfernt. Badetücher für den See leihen wir Ihnen gern.',
  ]),
];

const questions = [
  // ── English ──
  q('en', 'en/rooms', 'how much is a double room per night?', '€129'),
  q('en', 'en/rooms', 'we are a family of four, do you have a room for us', 'family room for up to four people'),
  q('en', 'en/rooms', 'is the wifi free', 'free Wi-Fi'),
  q('en', 'en/rooms', 'price for a room with lake view', '€15 more per night'),
  q('en', 'en/rooms', 'is there an elevator? my mother cannot climb stairs', 'lift'),
  q('en', 'en/check-in', 'what time can we check in', 'from 15:00 to 21:00'),
  q('en', 'en/check-in', 'Our flight lands late, we will only get there around 11 pm. Is that a problem? Regards, Mike', 'key safe'),
  q('en', 'en/check-in', 'CHECK OUT TIME?', 'until 11:00'),
  q('en', 'en/check-in', 'can we leave our bags after check out', 'store your luggage'),
  q('en', 'en/check-in', 'late checkout possible', '€25'),
  q('en', 'en/breakfast', 'when is breakfast served', 'from 7:00 to 10:30'),
  q('en', 'en/breakfast', "i'm coeliac, do you have gluten free bread in the morning", 'Gluten-free'),
  q('en', 'en/breakfast', "can I come for breakfast if I'm not staying at the hotel", '€19'),
  q('en', 'en/breakfast', 'room service breakfast?', '€9 extra per person'),
  q('en', 'en/restaurant', 'is the restaurant open on monday', 'Monday and Tuesday the restaurant is closed'),
  q('en', 'en/restaurant', 'do you have vegan meals', 'vegan main course'),
  q('en', 'en/restaurant', 'how do i reserve a table for dinner', 'Book a table by phone'),
  q('en', 'en/restaurant', 'half board price', '€34 per person per day'),
  q('en', 'en/restaurant', 'what time does the kitchen close', 'last orders at 21:00'),
  q('en', 'en/arrival', 'is parking free', 'Parking in our car park is free'),
  q('en', 'en/arrival', 'can i charge my tesla at the hotel', 'two charging points'),
  q('en', 'en/arrival', "we're coming by train, how far is the station", '800 metres'),
  q('en', 'en/arrival', 'could you collect us from the railway station', 'pick you up from the station'),
  q('en', 'en/cancellation-and-payment', 'what is your cancelation policy', 'up to 7 days before arrival'),
  q('en', 'en/cancellation-and-payment', 'do you accept amex', 'do not accept American Express'),
  q('en', 'en/cancellation-and-payment', 'is there a city tax', '€2.80 per adult per night'),
  q('en', 'en/pets-and-children', 'can i bring my dog', '€12 per night'),
  q('en', 'en/pets-and-children', 'do kids stay for free', 'Children under 6 stay free'),
  q('en', 'en/pets-and-children', 'do you have a crib for our baby', 'A cot and a high chair are free'),
  q('en', 'en/bikes-and-sauna', 'can we hire bicycles', '€15 per day'),
  q('en', 'en/bikes-and-sauna', 'sauna opening times', 'from 16:00 to 21:00'),
  q('en', 'en/bikes-and-sauna', 'where does the boat to the island leave from? thank you!', 'Prien harbour'),

  q('en', null, 'do you have a swimming pool'),
  q('en', null, 'is there air conditioning in the rooms'),
  q('en', null, 'is there a gym'),
  q('en', null, 'can i book a massage'),
  q('en', null, 'do you have a meeting room for twenty people'),
  q('en', null, 'can we rent a stand up paddle board'),
  q('en', null, 'do you have a room with a bathtub'),
  q('en', null, 'is there a shuttle from munich airport'),

  // ── German ──
  q('de', 'de/zimmer', 'was kostet ein doppelzimmer pro nacht', '129 €'),
  q('de', 'de/zimmer', 'wir sind zu viert, habt ihr ein zimmer für uns?', 'Familienzimmer für bis zu vier Personen'),
  q('de', 'de/zimmer', 'gibt es kostenloses wlan', 'kostenloses WLAN'),
  q('de', 'de/zimmer', 'aufpreis zimmer mit seeblick', '15 € mehr pro Nacht'),
  q('de', 'de/zimmer', 'gibt es einen fahrstuhl', 'Aufzug'),
  q('de', 'de/anreise-abreise', 'ab wann kann man einchecken', 'von 15:00 bis 21:00'),
  q('de', 'de/anreise-abreise', 'Guten Abend, unser Zug kommt erst um 23 Uhr an. Kommen wir dann noch ins Zimmer? Gruß, Petra', 'Schlüsselsafe'),
  q('de', 'de/anreise-abreise', 'WANN IST CHECK-OUT?', 'Check-out ist bis 11:00'),
  q('de', 'de/anreise-abreise', 'koennen wir nach dem auschecken unser gepaeck dalassen', 'Gepäck kostenlos'),
  q('de', 'de/fruehstueck', 'wann gibt es fruehstueck', 'von 7:00 bis 10:30'),
  q('de', 'de/fruehstueck', 'ich vertrage kein gluten, gibt es glutenfreies brot?', 'Glutenfreie'),
  q('de', 'de/fruehstueck', 'kann man auch als nicht-hotelgast frühstücken', '19 €'),
  q('de', 'de/fruehstueck', 'fruhstuck aufs zimmer?', '9 € extra pro Person'),
  q('de', 'de/restaurant', 'hat das restaurant montags offen', 'Montag und Dienstag ist das Restaurant geschlossen'),
  q('de', 'de/restaurant', 'gibt es vegane gerichte', 'veganes Hauptgericht'),
  q('de', 'de/restaurant', 'wie kann ich einen tisch zum abendessen reservieren', 'telefonisch'),
  q('de', 'de/restaurant', 'was kostet die halbpension', '34 € pro Person und Tag'),
  q('de', 'de/anfahrt-parken', 'ist das parken kostenlos', 'Parken auf unserem Parkplatz ist für Hotelgäste kostenlos'),
  q('de', 'de/anfahrt-parken', 'kann ich mein elektroauto laden', 'zwei Ladestationen'),
  q('de', 'de/anfahrt-parken', 'wir kommen mit der bahn, holt ihr uns vom bahnhof ab?', 'holen wir Sie kostenlos vom Bahnhof ab'),
  q('de', 'de/stornierung-zahlung', 'bis wann kann ich kostenlos stornieren', 'bis 7 Tage vor der Anreise'),
  q('de', 'de/stornierung-zahlung', 'nehmen sie american express', 'American Express akzeptieren wir nicht'),
  q('de', 'de/stornierung-zahlung', 'wie hoch ist die kurtaxe', '2,80 € pro Erwachsenem und Nacht'),
  q('de', 'de/stornierung-zahlung', 'kann ich mit ec-karte zahlen', 'Girocard'),
  q('de', 'de/haustiere-kinder', 'darf mein hund mitkommen', '12 € pro Nacht'),
  q('de', 'de/haustiere-kinder', 'zahlen kinder etwas', 'Kinder unter 6 Jahren übernachten kostenlos'),
  q('de', 'de/haustiere-kinder', 'habt ihr ein kinderbett', 'Babybett und Hochstuhl sind kostenlos'),
  q('de', 'de/fahrrad-sauna', 'kann man bei euch raeder ausleihen', '15 € pro Tag'),
  q('de', 'de/fahrrad-sauna', 'wann hat die sauna offen', 'von 16:00 bis 21:00'),
  q('de', 'de/fahrrad-sauna', 'wo fahrt das schiff zur herreninsel ab? danke!', 'Hafen in Prien'),

  q('de', null, 'haben Sie ein Schwimmbad'),
  q('de', null, 'haben die zimmer eine klimaanlage'),
  q('de', null, 'gibt es einen fitnessraum'),
  q('de', null, 'kann ich eine massage buchen'),
  q('de', null, 'habt ihr einen tagungsraum für zwanzig personen'),
  q('de', null, 'kann man stand-up-paddle-boards leihen'),
  q('de', null, 'gibt es zimmer mit badewanne'),
  q('de', null, 'gibt es einen shuttle vom flughafen münchen'),
];

export const hotelSet: EvalSet = {
  name: 'hotel',
  title: 'development: a small hotel with a restaurant, English and German',
  heldOut: false,
  pages,
  questions,
};
