/**
 * General words per language for the knowledge search (docs/lexicon.md): words of the same meaning, British and
 * American spellings, and translations between Dutch or German and English, from open data (WordNet, Open Dutch
 * WordNet, OpenThesaurus, FreeDict; data/LICENCES.md) that scripts/build-lexicon.ts turns into data/*.json.gz.
 *
 * A language's file is read the first time it is asked for (docs/lexicon.md, "Cost": a few hundred milliseconds and
 * some megabytes of heap each), then every answer is a map lookup. Words come in and go out folded as
 * src/text/words.ts folds them: lowercase, accents removed.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { primaryLanguage } from '../../text/language.ts';
import { words } from '../../text/words.ts';

/** A word → its list joined by '|': a third of the heap of arrays of strings (docs/lexicon.md, "Cost"). */
type Table = ReadonlyMap<string, string>;

/** The data files there are: a language's related words ('en'), a direction's translations ('nl-en'). */
const TABLES: ReadonlySet<string> = new Set(['en', 'nl', 'de', 'nl-en', 'en-nl', 'de-en', 'en-de']);
const NOTHING: readonly string[] = Object.freeze([]);
const loaded = new Map<string, Table>();

function table(name: string): Table | undefined {
  if (!TABLES.has(name)) return undefined;
  let found = loaded.get(name);
  if (!found) {
    const json = gunzipSync(readFileSync(new URL(`./data/${name}.json.gz`, import.meta.url))).toString('utf8');
    found = new Map(Object.entries(JSON.parse(json) as Record<string, string>));
    loaded.set(name, found);
  }
  return found;
}

/** Lists already split, by table and word: the words a shop's customers use are few, and asked for again and again. */
const split = new Map<string, readonly string[]>();
const SPLIT_KEPT = 20_000;

function lookUp(name: string, word: string): readonly string[] {
  const key = words(word).join(' ');
  const joined = key ? table(name)?.get(key) : undefined;
  if (joined === undefined) return NOTHING;
  const cacheKey = `${name}:${key}`;
  let list = split.get(cacheKey);
  if (!list) {
    if (split.size >= SPLIT_KEPT) split.clear();
    split.set(cacheKey, (list = Object.freeze(joined.split('|'))));
  }
  return list;
}

/**
 * Words and short phrases that mean the same as `word` in `language` ('en', 'nl', 'de'; a tag such as 'en-GB' is
 * read as its language), folded as src/text/words.ts folds, British and American spellings included, never `word`
 * itself; empty when unknown. Most related first, at most 8. Inflections are the search's stemming's job.
 */
export function relatedWords(language: string, word: string): readonly string[] {
  return lookUp(primaryLanguage(language), word);
}

/** The same meaning in another language (Dutch and German to and from English), folded; empty when unknown; at most 5. */
export function translations(from: string, to: string, word: string): readonly string[] {
  return lookUp(`${primaryLanguage(from)}-${primaryLanguage(to)}`, word);
}
