import { Zip, ZipPassThrough } from "fflate";
import { xmlText } from "./xml";

/**
 * An EPUB 3 publication as a stream of its ZIP (OCF) bytes: `mimetype` first and stored, `META-INF/container.xml`,
 * the package document (`EPUB/package.opf`), the navigation document and an EPUB 2 NCX for older reading systems, one
 * stylesheet, then each content document, deflated one at a time as the stream is read (a document's XHTML is made
 * only when the zip reaches it, and dropped once deflated). fflate writes the zip, the runtime's zlib deflates.
 */

/** A content document: an XHTML file in the spine, in reading order, listed in the table of contents. */
export interface EpubDocument {
  /** A manifest id and a file name (under `EPUB/`) of ASCII letters, digits and hyphens. */
  id: string;
  title: string;
  /** The `<body>`'s content, as well-formed XHTML (text escaped with `xmlText`); made when the zip reaches it. */
  body: () => string;
  /** The first document of the story itself (the `bodymatter` landmark). */
  bodymatter?: boolean;
}

export interface EpubBook {
  /** The publication's unique identifier, e.g. `urn:uuid:…`. */
  identifier: string;
  title: string;
  subtitle?: string;
  /** A BCP 47 language tag: the package's and every document's language. */
  language: string;
  creators: string[];
  description?: string;
  /** Where the publication comes from (an address). */
  source?: string;
  publisher?: string;
  /** When it last changed (ISO 8601): `dcterms:modified`, and every file's time in the zip. */
  modified: string;
  /** More package metadata: `<meta property="…">value</meta>` (a reserved prefix, such as `schema:`). */
  meta?: { property: string; value: string }[];
  /** The words of the navigation document's heading ("Contents"), in `navLanguage`. */
  navTitle: string;
  navLanguage: string;
  css: string;
  documents: EpubDocument[];
}

const CONTAINER = `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="EPUB/package.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
`;

const href = (d: EpubDocument) => `${d.id}.xhtml`;
/** `dcterms:modified` takes whole seconds: `CCYY-MM-DDThh:mm:ssZ`. */
const toSeconds = (iso: string) => `${new Date(iso).toISOString().slice(0, 19)}Z`;

/** An XHTML content document in the book's language. */
export function xhtml(language: string, title: string, body: string): string {
  const lang = xmlText(language);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="${lang}" lang="${lang}">
<head><title>${xmlText(title)}</title><link rel="stylesheet" type="text/css" href="style.css"/></head>
<body>
${body}
</body>
</html>
`;
}

function packageDocument(book: EpubBook): string {
  const m = (s: string) => xmlText(s);
  const titles = [`<dc:title id="title">${m(book.title)}</dc:title>`, `<meta refines="#title" property="title-type">main</meta>`];
  if (book.subtitle) titles.push(`<dc:title id="subtitle">${m(book.subtitle)}</dc:title>`, `<meta refines="#subtitle" property="title-type">subtitle</meta>`);
  const creators = book.creators.flatMap((name, i) => [
    `<dc:creator id="creator-${i + 1}">${m(name)}</dc:creator>`,
    `<meta refines="#creator-${i + 1}" property="role" scheme="marc:relators">aut</meta>`,
  ]);
  const metadata = [
    `<dc:identifier id="book-id">${m(book.identifier)}</dc:identifier>`,
    ...titles,
    `<dc:language>${m(book.language)}</dc:language>`,
    ...creators,
    book.publisher ? `<dc:publisher>${m(book.publisher)}</dc:publisher>` : "",
    book.description ? `<dc:description>${m(book.description)}</dc:description>` : "",
    book.source ? `<dc:source>${m(book.source)}</dc:source>` : "",
    ...(book.meta ?? []).map((x) => `<meta property="${m(x.property)}">${m(x.value)}</meta>`),
    `<meta property="dcterms:modified">${toSeconds(book.modified)}</meta>`,
  ].filter(Boolean);
  const items = [
    `<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>`,
    `<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>`,
    `<item id="css" href="style.css" media-type="text/css"/>`,
    ...book.documents.map((d) => `<item id="${d.id}" href="${href(d)}" media-type="application/xhtml+xml"/>`),
  ];
  // The table of contents is read too, after the first document (a title page), as a printed book has it.
  const spine = book.documents.map((d) => `<itemref idref="${d.id}"/>`);
  spine.splice(1, 0, `<itemref idref="nav"/>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="book-id" xml:lang="${m(book.language)}">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
${metadata.join("\n")}
</metadata>
<manifest>
${items.join("\n")}
</manifest>
<spine toc="ncx">
${spine.join("\n")}
</spine>
</package>
`;
}

function navigationDocument(book: EpubBook): string {
  const lang = xmlText(book.navLanguage);
  const entries = book.documents.map((d) => `<li><a href="${href(d)}">${xmlText(d.title)}</a></li>`);
  const start = book.documents.find((d) => d.bodymatter);
  const landmarks = [`<li><a epub:type="toc" href="nav.xhtml#toc">${xmlText(book.navTitle)}</a></li>`];
  if (start) landmarks.push(`<li><a epub:type="bodymatter" href="${href(start)}">${xmlText(start.title)}</a></li>`);
  const body = `<nav epub:type="toc" id="toc"><h1 xml:lang="${lang}" lang="${lang}">${xmlText(book.navTitle)}</h1>
<ol>
${entries.join("\n")}
</ol>
</nav>
<nav epub:type="landmarks" hidden="hidden"><ol>
${landmarks.join("\n")}
</ol></nav>`;
  return xhtml(book.language, book.navTitle, body);
}

function ncx(book: EpubBook): string {
  const points = book.documents.map(
    (d, i) => `<navPoint id="nav-${i + 1}" playOrder="${i + 1}"><navLabel><text>${xmlText(d.title)}</text></navLabel><content src="${href(d)}"/></navPoint>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1" xml:lang="${xmlText(book.language)}">
<head>
<meta name="dtb:uid" content="${xmlText(book.identifier)}"/>
<meta name="dtb:depth" content="1"/>
<meta name="dtb:totalPageCount" content="0"/>
<meta name="dtb:maxPageNumber" content="0"/>
</head>
<docTitle><text>${xmlText(book.title)}</text></docTitle>
<navMap>
${points.join("\n")}
</navMap>
</ncx>
`;
}

/** The files of the publication in zip order, each made when the zip reaches it. */
function* files(book: EpubBook): Generator<{ name: string; text: () => string }> {
  yield { name: "META-INF/container.xml", text: () => CONTAINER };
  yield { name: "EPUB/package.opf", text: () => packageDocument(book) };
  yield { name: "EPUB/nav.xhtml", text: () => navigationDocument(book) };
  yield { name: "EPUB/toc.ncx", text: () => ncx(book) };
  yield { name: "EPUB/style.css", text: () => book.css };
  for (const d of book.documents) yield { name: `EPUB/${href(d)}`, text: () => xhtml(book.language, d.title, d.body()) };
}

const encoder = new TextEncoder();

/**
 * A zip entry deflated by the runtime's own zlib (`CompressionStream("deflate-raw")`), fflate keeping its CRC, size
 * and headers: fflate's deflate, in JavaScript, was a third of an export's CPU (bench/RESULTS.md, "EPUB export").
 */
class NativeDeflate extends ZipPassThrough {
  override compression = 8;
  /** The data reaches the zip deflated, by `addDeflated`, never as it was pushed. */
  override process() {}
}

/** Adds `bytes` to the zip as the file `filename`, deflated; resolves once the zip has all of it. */
async function addDeflated(zip: Zip, filename: string, mtime: Date, bytes: Uint8Array): Promise<void> {
  const entry = new NativeDeflate(filename);
  entry.mtime = mtime;
  zip.add(entry);
  entry.push(bytes, true); // its CRC and size, of the data as it is
  const reader = new Response(bytes).body!.pipeThrough(new CompressionStream("deflate-raw")).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) entry.ondata(null, read.value as Uint8Array<ArrayBuffer>, false);
  entry.ondata(null, new Uint8Array(0), true);
}

/**
 * The publication's bytes, one file deflated per read of the stream (so a long book is never whole in memory). The
 * same book gives the same bytes: every file carries the time `modified`, never the clock's.
 */
export function epubStream(book: EpubBook): ReadableStream<Uint8Array> {
  const mtime = new Date(book.modified);
  const pending = files(book);
  let zip: Zip;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      zip = new Zip((err, chunk, final) => {
        if (err) return controller.error(err);
        controller.enqueue(chunk);
        if (final) controller.close();
      });
      // The OCF's first file: stored, never compressed, with no extra field (fflate writes none).
      const mimetype = new ZipPassThrough("mimetype");
      mimetype.mtime = mtime;
      zip.add(mimetype);
      mimetype.push(encoder.encode("application/epub+zip"), true);
    },
    async pull() {
      const next = pending.next();
      if (next.done) return zip.end();
      await addDeflated(zip, next.value.name, mtime, encoder.encode(next.value.text()));
    },
  });
}
