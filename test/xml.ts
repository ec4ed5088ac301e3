/**
 * A strict XML well-formedness check for the markup the tests read (the story map's SVG): workerd has no XML parser.
 * It throws on anything an XML parser would refuse in such markup: an unclosed or misnested element, an unquoted or
 * repeated attribute, a raw `<` or a bare `&` in text or a value, an unknown entity, text or a second element
 * outside the root. Comments are skipped; an XML declaration is taken at the very start only (an Atom feed's);
 * other processing instructions, CDATA and doctypes are refused (none is expected).
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: (XmlElement | string)[];
}

const NAME = /^[A-Za-z_:][-\w:.]*/;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Text or an attribute value with its references decoded; refuses a bare `&` or an unknown entity. */
function decode(raw: string, where: string): string {
  if (raw.includes("<")) throw new Error(`raw "<" in ${where}`);
  return raw.replace(/&([^;\s&]*);?/g, (ref, body: string) => {
    if (!ref.endsWith(";")) throw new Error(`bare "&" in ${where}: ${JSON.stringify(ref)}`);
    if (body in ENTITIES) return ENTITIES[body];
    const n = /^#(\d+)$/.exec(body)?.[1] ?? (/^#x([0-9a-f]+)$/i.exec(body) ? Number.parseInt(body.slice(2), 16) : undefined);
    if (n === undefined) throw new Error(`unknown entity ${ref} in ${where}`);
    return String.fromCodePoint(Number(n));
  });
}

export function parseXml(text: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const declaration = /^<\?xml version="1\.0"( encoding="utf-8")?\?>/i.exec(text);
  let at = declaration ? declaration[0].length : 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at offset ${at}: ${JSON.stringify(text.slice(at, at + 60))}`);
  };
  while (at < text.length) {
    if (text.startsWith("<!--", at)) {
      const end = text.indexOf("-->", at);
      if (end < 0) fail("unclosed comment");
      at = end + 3;
    } else if (text.startsWith("</", at)) {
      const name = NAME.exec(text.slice(at + 2))?.[0] ?? fail("no name in a closing tag");
      const end = at + 2 + name.length;
      const close = /^\s*>/.exec(text.slice(end)) ?? fail("a closing tag not closed");
      const open = stack.pop();
      if (open?.name !== name) fail(`</${name}> closes <${open?.name ?? "nothing"}>`);
      at = end + close[0].length;
    } else if (text.startsWith("<!", at) || text.startsWith("<?", at)) {
      fail("a declaration, CDATA or instruction");
    } else if (text[at] === "<") {
      at = openTag(text, at + 1, stack, fail, (el) => {
        if (stack.length) stack[stack.length - 1].children.push(el);
        else if (root) fail("a second root element");
        else root = el;
      });
    } else {
      const end = text.indexOf("<", at) < 0 ? text.length : text.indexOf("<", at);
      const raw = text.slice(at, end);
      const value = decode(raw, "text");
      if (stack.length) stack[stack.length - 1].children.push(value);
      else if (raw.trim()) fail("text outside the root");
      at = end;
    }
  }
  if (stack.length) throw new Error(`<${stack[stack.length - 1].name}> is never closed`);
  if (!root) throw new Error("no element");
  return root;
}

/** Reads `name attr="v" … >` or `… />` from `at`; returns where it ends. */
function openTag(text: string, at: number, stack: XmlElement[], fail: (why: string) => never, add: (el: XmlElement) => void): number {
  const name = NAME.exec(text.slice(at))?.[0] ?? fail("no element name");
  const el: XmlElement = { name, attrs: {}, children: [] };
  let i = at + name.length;
  for (;;) {
    const space = /^\s*/.exec(text.slice(i))![0].length;
    i += space;
    if (text.startsWith("/>", i)) {
      add(el);
      return i + 2;
    }
    if (text[i] === ">") {
      add(el);
      stack.push(el);
      return i + 1;
    }
    if (!space) fail(`no space before an attribute of <${name}>`);
    const attr = /^([A-Za-z_:][-\w:.]*)\s*=\s*("([^"]*)"|'([^']*)')/.exec(text.slice(i)) ?? fail(`a malformed or unquoted attribute in <${name}>`);
    if (attr[1] in el.attrs) fail(`attribute ${attr[1]} twice in <${name}>`);
    el.attrs[attr[1]] = decode(attr[3] ?? attr[4], `${name}@${attr[1]}`);
    i += attr[0].length;
  }
}

/** Every element of the tree, depth first. */
export function* elements(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const c of el.children) if (typeof c !== "string") yield* elements(c);
}

/** An element's text, its descendants' included. */
export const textOf = (el: XmlElement): string => el.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("");
