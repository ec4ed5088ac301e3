CREATE TABLE `preferences` (
	`account_id` text PRIMARY KEY NOT NULL,
	`hide_mature` integer DEFAULT false NOT NULL,
	`hidden_tags` text DEFAULT '[]' NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `story_tags` (
	`story_id` text NOT NULL,
	`tag_key` text NOT NULL,
	`name` text NOT NULL,
	`position` integer NOT NULL,
	PRIMARY KEY(`story_id`, `tag_key`),
	FOREIGN KEY (`story_id`) REFERENCES `stories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `story_tags_tag_idx` ON `story_tags` (`tag_key`,`story_id`);--> statement-breakpoint
CREATE TABLE `tags` (
	`key` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `branches` ADD `bot_segments_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `rating` text DEFAULT 'general' NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `warnings` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `segments_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `bot_segments_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-written (issue 58): the authorship counters of the segments already written, which every segment's batch moves from now on.
UPDATE `branches` SET `bot_segments_count` = (SELECT count(*) FROM `segments` s WHERE s.`branch_id` = `branches`.`id` AND s.`author_type` = 'bot');--> statement-breakpoint
UPDATE `stories` SET
  `segments_count` = (SELECT count(*) FROM `segments` s WHERE s.`story_id` = `stories`.`id`),
  `bot_segments_count` = (SELECT count(*) FROM `segments` s WHERE s.`story_id` = `stories`.`id` AND s.`author_type` = 'bot');
