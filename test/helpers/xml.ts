/**
 * A small strict XML reader for the reports the tests read back (the JUnit report of `cli test`): elements, attributes,
 * text, comments, the XML declaration and the five predefined entities plus character references. It throws on what a
 * conforming parser refuses and a sloppy writer produces: a raw `<` or `&` in text or an attribute, an unknown entity,
 * a mismatched or unclosed tag, a repeated attribute, a character XML 1.0 cannot hold, more than one root. (linkedom,
 * the HTML parser among our dependencies, accepts all of those, so it cannot tell a broken report from a good one.)
 */

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's text, its children's included, entities decoded. */
  text: string;
}

const NAME = /[A-Za-z_:][\w:.-]*/y;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const XML_CHAR = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

export function parseXml(source: string): XmlElement {
  if (!XML_CHAR.test(source)) throw new Error('a character XML cannot hold');
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at offset ${i}: ${JSON.stringify(source.slice(i, i + 30))}`);
  };
  const skipSpace = () => {
    while (i < source.length && /\s/.test(source[i]!)) i++;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(source);
    if (!m) fail('a name was expected');
    i += m![0].length;
    return m![0];
  };
  const decode = (raw: string): string => {
    if (raw.includes('<')) fail('a raw < in text or an attribute');
    return raw.replace(/&([^;]*);?/g, (whole, ref: string) => {
      if (!whole.endsWith(';')) fail('an & that starts no entity');
      if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
      if (ref.startsWith('#')) return String.fromCodePoint(Number(ref.slice(1)));
      const value = ENTITIES[ref];
      if (value === undefined) fail(`an unknown entity &${ref};`);
      return value!;
    });
  };
  const skipMisc = () => {
    for (;;) {
      skipSpace();
      if (source.startsWith('<!--', i)) {
        const end = source.indexOf('-->', i);
        if (end < 0) fail('an unclosed comment');
        i = end + 3;
      } else return;
    }
  };

  function element(): XmlElement {
    if (source[i] !== '<') fail('an element was expected');
    i++;
    const tag = name();
    const attributes: Record<string, string> = {};
    for (;;) {
      skipSpace();
      if (source.startsWith('/>', i)) {
        i += 2;
        return { name: tag, attributes, children: [], text: '' };
      }
      if (source[i] === '>') {
        i++;
        break;
      }
      const attribute = name();
      if (Object.hasOwn(attributes, attribute)) fail(`the attribute ${attribute} twice`);
      skipSpace();
      if (source[i] !== '=') fail('= was expected');
      i++;
      skipSpace();
      const quote = source[i];
      if (quote !== '"' && quote !== "'") fail('a quoted value was expected');
      const end = source.indexOf(quote!, i + 1);
      if (end < 0) fail('an unclosed attribute value');
      attributes[attribute] = decode(source.slice(i + 1, end));
      i = end + 1;
    }
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      if (i >= source.length) fail(`<${tag}> is not closed`);
      if (source.startsWith('</', i)) {
        i += 2;
        const closing = name();
        if (closing !== tag) fail(`</${closing}> closes <${tag}>`);
        skipSpace();
        if (source[i] !== '>') fail('> was expected');
        i++;
        return { name: tag, attributes, children, text };
      }
      if (source.startsWith('<!--', i)) {
        skipMisc();
        continue;
      }
      if (source[i] === '<') {
        const child = element();
        children.push(child);
        text += child.text;
        continue;
      }
      const next = source.indexOf('<', i);
      const end = next < 0 ? source.length : next;
      text += decode(source.slice(i, end));
      i = end;
    }
  }

  if (source.startsWith('<?xml')) {
    const end = source.indexOf('?>');
    if (end < 0) fail('an unclosed XML declaration');
    i = end + 2;
  }
  skipMisc();
  const root = element();
  skipMisc();
  if (i !== source.length) fail('content after the root element');
  return root;
}

/** Every element named `name` below `root` (and root itself), in document order. */
export function elementsNamed(root: XmlElement, name: string): XmlElement[] {
  return [...(root.name === name ? [root] : []), ...root.children.flatMap((c) => elementsNamed(c, name))];
}
