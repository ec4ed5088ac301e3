-- Custom SQL migration file, put your code below! --
-- hand-written:
-- Full-text search (issue 58 §2; src/domain/search.ts). drizzle-kit does not model virtual tables: the two indexes,
-- and the rows written before them, are all here. Each index row has its story's or segment's rowid. The writes feed
-- them in their own batch (src/domain/search-index.ts), each CJK character as a token of itself and the next character
-- of its run, between separators (src/lib/search-text.ts, `indexText`). The backfill below is the same encoding in
-- SQL, character by character, 64 at a time (`substr` walks a text from its start; `LIMIT -1` keeps SQLite from
-- folding a chunk's `substr` into each character's, which made a text's cost the square of its length). CJK is
-- U+3005–U+3007, U+3040–U+30FF, U+31F0–U+31FF, U+3400–U+4DBF, U+4E00–U+9FFF,
-- U+AC00–U+D7A3, U+F900–U+FAFF, U+20000–U+3FFFF, in two GLOB classes (D1 refuses a pattern over 50 bytes);
-- the control characters 2, 3, 4 and 31 become spaces; a text with neither is indexed as it is.
-- test/search.test.ts runs these statements again and compares them, row for row, with what the writes indexed.
CREATE VIRTUAL TABLE `search_stories` USING fts5(title, background, tags, tokenize = 'unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE VIRTUAL TABLE `search_segments` USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE TABLE `search_positions` (`i` integer PRIMARY KEY);--> statement-breakpoint
INSERT INTO `search_positions` (`i`)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 65
    OR i <= (SELECT max(m) FROM (SELECT max(length(content)) / 64 + 1 AS m FROM segments UNION ALL SELECT max(length(background)) / 64 + 1 FROM stories)))
  SELECT i FROM n;--> statement-breakpoint
INSERT INTO `search_stories` (rowid, title, background, tags)
  SELECT s.rowid, CASE WHEN (s.title GLOB '*[々-〇぀-ヿㇰ-ㇿ㐀-䶿]*' OR s.title GLOB '*[一-鿿가-힣豈-﫿𠀀-𿿿]*') OR s.title GLOB '*' || '[' || char(2, 3, 4, 31) || ']' || '*' THEN (SELECT group_concat(CASE
      WHEN (w.c GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.c GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN char(31) || w.c || CASE WHEN (w.n GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.n GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN w.n ELSE '' END || char(31)
      WHEN w.c GLOB '[' || char(2, 3, 4, 31) || ']' THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j)
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(s.title, (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(s.title) + 63) / 64 LIMIT -1) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w) ELSE s.title END,
  CASE WHEN (s.background GLOB '*[々-〇぀-ヿㇰ-ㇿ㐀-䶿]*' OR s.background GLOB '*[一-鿿가-힣豈-﫿𠀀-𿿿]*') OR s.background GLOB '*' || '[' || char(2, 3, 4, 31) || ']' || '*' THEN (SELECT group_concat(CASE
      WHEN (w.c GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.c GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN char(31) || w.c || CASE WHEN (w.n GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.n GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN w.n ELSE '' END || char(31)
      WHEN w.c GLOB '[' || char(2, 3, 4, 31) || ']' THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j)
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(s.background, (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(s.background) + 63) / 64 LIMIT -1) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w) ELSE s.background END,
  CASE WHEN (coalesce((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), '') GLOB '*[々-〇぀-ヿㇰ-ㇿ㐀-䶿]*' OR coalesce((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), '') GLOB '*[一-鿿가-힣豈-﫿𠀀-𿿿]*') OR coalesce((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), '') GLOB '*' || '[' || char(2, 3, 4, 31) || ']' || '*' THEN (SELECT group_concat(CASE
      WHEN (w.c GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.c GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN char(31) || w.c || CASE WHEN (w.n GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.n GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN w.n ELSE '' END || char(31)
      WHEN w.c GLOB '[' || char(2, 3, 4, 31) || ']' THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j)
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(coalesce((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), ''), (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(coalesce((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), '')) + 63) / 64 LIMIT -1) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w) ELSE coalesce((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), '') END
  FROM stories s;--> statement-breakpoint
INSERT INTO `search_segments` (rowid, content)
  SELECT g.rowid, CASE WHEN (g.content GLOB '*[々-〇぀-ヿㇰ-ㇿ㐀-䶿]*' OR g.content GLOB '*[一-鿿가-힣豈-﫿𠀀-𿿿]*') OR g.content GLOB '*' || '[' || char(2, 3, 4, 31) || ']' || '*' THEN (SELECT group_concat(CASE
      WHEN (w.c GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.c GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN char(31) || w.c || CASE WHEN (w.n GLOB '[々-〇぀-ヿㇰ-ㇿ㐀-䶿]' OR w.n GLOB '[一-鿿가-힣豈-﫿𠀀-𿿿]') THEN w.n ELSE '' END || char(31)
      WHEN w.c GLOB '[' || char(2, 3, 4, 31) || ']' THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j)
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(g.content, (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(g.content) + 63) / 64 LIMIT -1) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w) ELSE g.content END
  FROM segments g;--> statement-breakpoint
DROP TABLE `search_positions`;
