CREATE TABLE `search_move` (
	`id` integer PRIMARY KEY NOT NULL,
	`legacy_max` integer NOT NULL,
	`watermark` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `stories` ADD `search_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `search_synced` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `search_upto` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `stories` ADD `search_dirty_at` text;--> statement-breakpoint
CREATE INDEX `stories_search_dirty_idx` ON `stories` (`search_dirty_at`) WHERE search_dirty_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `bots_suspended_idx` ON `bots` (`suspended_at`) WHERE suspended_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `branches_hidden_idx` ON `branches` (`story_id`) WHERE hidden_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `segments_hidden_idx` ON `segments` (`story_id`) WHERE hidden_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `users_suspended_idx` ON `users` (`suspended_at`) WHERE suspended_at IS NOT NULL;--> statement-breakpoint
-- hand-written: the stories written before this migration stay searched in D1's FTS tables until the move copies
-- each to its shard, in rowid order (src/domain/discovery/search-move.ts); the later ones are searched in shards only.
INSERT INTO `search_move` (`id`, `legacy_max`, `watermark`) SELECT 1, coalesce(max(rowid), 0), 1 FROM `stories`;
