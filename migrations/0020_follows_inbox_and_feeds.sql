CREATE TABLE `feed_tokens` (
	`account_id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `feed_tokens_token_hash_unique` ON `feed_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `follow_counts` (
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`followers` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`target_type`, `target_id`)
);
--> statement-breakpoint
CREATE TABLE `follows` (
	`id` text PRIMARY KEY NOT NULL,
	`follower_id` text NOT NULL,
	`follower_type` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follows_follower_target_unique` ON `follows` (`follower_id`,`target_type`,`target_id`);--> statement-breakpoint
CREATE INDEX `follows_target_follower_idx` ON `follows` (`target_type`,`target_id`,`follower_id`);--> statement-breakpoint
CREATE INDEX `follows_follower_created_idx` ON `follows` (`follower_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `inbox_events` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`actor_id` text NOT NULL,
	`story_id` text NOT NULL,
	`branch_id` text,
	`segment_id` text,
	`comment_id` text,
	`recipient_id` text,
	`data` text,
	`merge_key` text NOT NULL,
	`leader_id` text,
	`cursor` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`due_at` text NOT NULL,
	`settled_at` text,
	`sends` integer DEFAULT 0 NOT NULL,
	`last_error` text
);
--> statement-breakpoint
CREATE INDEX `inbox_events_unsettled_idx` ON `inbox_events` (`settled_at`,`due_at`);--> statement-breakpoint
CREATE INDEX `inbox_events_unled_idx` ON `inbox_events` (`merge_key`) WHERE leader_id IS NULL;--> statement-breakpoint
CREATE INDEX `inbox_events_leader_idx` ON `inbox_events` (`leader_id`);--> statement-breakpoint
CREATE TABLE `inbox_items` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`collapse_key` text NOT NULL,
	`story_id` text NOT NULL,
	`branch_id` text,
	`segment_id` text,
	`comment_id` text,
	`actor_id` text NOT NULL,
	`data` text,
	`event_id` text NOT NULL,
	`count` integer NOT NULL,
	`seq` integer NOT NULL,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`read_at` text
);
--> statement-breakpoint
CREATE INDEX `inbox_items_account_seq_idx` ON `inbox_items` (`account_id`,`seq`);--> statement-breakpoint
CREATE INDEX `inbox_items_open_idx` ON `inbox_items` (`account_id`,`collapse_key`,`started_at`) WHERE read_at IS NULL;