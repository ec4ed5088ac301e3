-- Custom SQL migration file, put your code below! --
-- hand-written:
-- Full-text search (issue 58 §2; src/domain/search.ts). drizzle-kit does not model virtual tables: the two indexes,
-- and the rows written before them, are all here. Each index row has its story's or segment's rowid. The writes feed
-- them in their own batch (src/domain/search-index.ts), with CJK runs as bigram tokens (src/lib/search-text.ts,
-- `indexText`); the backfill below is the same encoding in SQL (the same CJK ranges; test/search.test.ts holds the two
-- to the same text): each character's piece, taken from the text 64 characters at a time, as `substr` walks UTF-8
-- from a text's start.
CREATE VIRTUAL TABLE `search_stories` USING fts5(title, background, tags, tokenize = 'unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE VIRTUAL TABLE `search_segments` USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE TABLE `search_positions` (`i` integer PRIMARY KEY);--> statement-breakpoint
INSERT INTO `search_positions` (`i`)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 65
    OR i <= (SELECT max(m) FROM (SELECT max(length(content)) / 64 + 1 AS m FROM segments UNION ALL SELECT max(length(background)) / 64 + 1 FROM stories)))
  SELECT i FROM n;--> statement-breakpoint
INSERT INTO `search_stories` (rowid, title, background, tags)
  SELECT s.rowid, (SELECT coalesce(group_concat(CASE
      WHEN (unicode(w.c) BETWEEN 12293 AND 12295 OR unicode(w.c) BETWEEN 12352 AND 12543 OR unicode(w.c) BETWEEN 12784 AND 12799 OR unicode(w.c) BETWEEN 13312 AND 19903 OR unicode(w.c) BETWEEN 19968 AND 40959 OR unicode(w.c) BETWEEN 44032 AND 55203 OR unicode(w.c) BETWEEN 63744 AND 64255 OR unicode(w.c) BETWEEN 131072 AND 262143)
        THEN char(31) || w.c || CASE WHEN (unicode(w.n) BETWEEN 12293 AND 12295 OR unicode(w.n) BETWEEN 12352 AND 12543 OR unicode(w.n) BETWEEN 12784 AND 12799 OR unicode(w.n) BETWEEN 13312 AND 19903 OR unicode(w.n) BETWEEN 19968 AND 40959 OR unicode(w.n) BETWEEN 44032 AND 55203 OR unicode(w.n) BETWEEN 63744 AND 64255 OR unicode(w.n) BETWEEN 131072 AND 262143) THEN w.n ELSE '' END || char(31)
      WHEN unicode(w.c) IN (2, 3, 4, 31) THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j), '')
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(s.title, (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(s.title) + 63) / 64) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w),
  (SELECT coalesce(group_concat(CASE
      WHEN (unicode(w.c) BETWEEN 12293 AND 12295 OR unicode(w.c) BETWEEN 12352 AND 12543 OR unicode(w.c) BETWEEN 12784 AND 12799 OR unicode(w.c) BETWEEN 13312 AND 19903 OR unicode(w.c) BETWEEN 19968 AND 40959 OR unicode(w.c) BETWEEN 44032 AND 55203 OR unicode(w.c) BETWEEN 63744 AND 64255 OR unicode(w.c) BETWEEN 131072 AND 262143)
        THEN char(31) || w.c || CASE WHEN (unicode(w.n) BETWEEN 12293 AND 12295 OR unicode(w.n) BETWEEN 12352 AND 12543 OR unicode(w.n) BETWEEN 12784 AND 12799 OR unicode(w.n) BETWEEN 13312 AND 19903 OR unicode(w.n) BETWEEN 19968 AND 40959 OR unicode(w.n) BETWEEN 44032 AND 55203 OR unicode(w.n) BETWEEN 63744 AND 64255 OR unicode(w.n) BETWEEN 131072 AND 262143) THEN w.n ELSE '' END || char(31)
      WHEN unicode(w.c) IN (2, 3, 4, 31) THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j), '')
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(s.background, (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(s.background) + 63) / 64) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w),
  (SELECT coalesce(group_concat(CASE
      WHEN (unicode(w.c) BETWEEN 12293 AND 12295 OR unicode(w.c) BETWEEN 12352 AND 12543 OR unicode(w.c) BETWEEN 12784 AND 12799 OR unicode(w.c) BETWEEN 13312 AND 19903 OR unicode(w.c) BETWEEN 19968 AND 40959 OR unicode(w.c) BETWEEN 44032 AND 55203 OR unicode(w.c) BETWEEN 63744 AND 64255 OR unicode(w.c) BETWEEN 131072 AND 262143)
        THEN char(31) || w.c || CASE WHEN (unicode(w.n) BETWEEN 12293 AND 12295 OR unicode(w.n) BETWEEN 12352 AND 12543 OR unicode(w.n) BETWEEN 12784 AND 12799 OR unicode(w.n) BETWEEN 13312 AND 19903 OR unicode(w.n) BETWEEN 19968 AND 40959 OR unicode(w.n) BETWEEN 44032 AND 55203 OR unicode(w.n) BETWEEN 63744 AND 64255 OR unicode(w.n) BETWEEN 131072 AND 262143) THEN w.n ELSE '' END || char(31)
      WHEN unicode(w.c) IN (2, 3, 4, 31) THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j), '')
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id), (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length((SELECT group_concat(st.name, ', ' ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id)) + 63) / 64) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w)
  FROM stories s;--> statement-breakpoint
INSERT INTO `search_segments` (rowid, content)
  SELECT g.rowid, (SELECT coalesce(group_concat(CASE
      WHEN (unicode(w.c) BETWEEN 12293 AND 12295 OR unicode(w.c) BETWEEN 12352 AND 12543 OR unicode(w.c) BETWEEN 12784 AND 12799 OR unicode(w.c) BETWEEN 13312 AND 19903 OR unicode(w.c) BETWEEN 19968 AND 40959 OR unicode(w.c) BETWEEN 44032 AND 55203 OR unicode(w.c) BETWEEN 63744 AND 64255 OR unicode(w.c) BETWEEN 131072 AND 262143)
        THEN char(31) || w.c || CASE WHEN (unicode(w.n) BETWEEN 12293 AND 12295 OR unicode(w.n) BETWEEN 12352 AND 12543 OR unicode(w.n) BETWEEN 12784 AND 12799 OR unicode(w.n) BETWEEN 13312 AND 19903 OR unicode(w.n) BETWEEN 19968 AND 40959 OR unicode(w.n) BETWEEN 44032 AND 55203 OR unicode(w.n) BETWEEN 63744 AND 64255 OR unicode(w.n) BETWEEN 131072 AND 262143) THEN w.n ELSE '' END || char(31)
      WHEN unicode(w.c) IN (2, 3, 4, 31) THEN ' '
      ELSE w.c END, '' ORDER BY w.k, w.j), '')
    FROM (SELECT ch.k, p.i AS j, substr(ch.chunk, p.i, 1) AS c, substr(ch.chunk, p.i + 1, 1) AS n
      FROM (SELECT k.i AS k, substr(g.content, (k.i - 1) * 64 + 1, 65) AS chunk FROM search_positions k WHERE k.i <= (length(g.content) + 63) / 64) ch
      JOIN search_positions p ON p.i <= min(64, length(ch.chunk))) w)
  FROM segments g;--> statement-breakpoint
DROP TABLE `search_positions`;
