CREATE TABLE `log_authors` (
	`author_id` text PRIMARY KEY NOT NULL,
	`author_type` text NOT NULL,
	`author_name` text NOT NULL,
	`entries` integer NOT NULL,
	`first_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `log_authors_rank_idx` ON `log_authors` ("entries" DESC,`first_at`,`author_id`);--> statement-breakpoint
CREATE TABLE `log_totals` (
	`author_type` text PRIMARY KEY NOT NULL,
	`entries` integer NOT NULL
);
--> statement-breakpoint
DROP INDEX `segments_author_idx`;--> statement-breakpoint
CREATE INDEX `segments_author_created_idx` ON `segments` (`author_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `stories` ADD `continuations_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `stories_continued_idx` ON `stories` ("continuations_count" DESC,`created_at`,`id`) WHERE continuations_count > 0;--> statement-breakpoint
-- hand-written: the counters start from the logs already there (nothing pruned them yet); from now on each segment's
-- batch bumps them, and the sweeper prunes log entries older than LOGS_KEEP_DAYS.
INSERT INTO `log_totals` (`author_type`, `entries`) SELECT `author_type`, count(*) FROM `logs` GROUP BY `author_type`;--> statement-breakpoint
INSERT INTO `log_authors` (`author_id`, `author_type`, `author_name`, `entries`, `first_at`)
  SELECT `author_id`, max(`author_type`), max(`author_name`), count(*), min(`created_at`) FROM `logs` GROUP BY `author_id`;--> statement-breakpoint
UPDATE `stories` SET `continuations_count` = x.n
  FROM (SELECT `story_id`, count(*) AS n FROM `logs` WHERE `is_continuation` = 'continuation' GROUP BY `story_id`) AS x
  WHERE x.story_id = `stories`.`id`;
